import { Injectable } from '@nestjs/common';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { validatePlain } from '../common/validation';
import type { HostHandler, JsonValue } from '../sandbox/sandbox.provider';
import { ListTokensQueryDto } from '../tokens/dto/token.dto';
import { TokenizeService } from '../tokens/tokenize.service';
import { TokenUpdates } from '../tokens/token-updates.service';
import { TokensService } from '../tokens/tokens.service';

/**
 * The host side of `req.bt`: the official SDK's token calls, executed with the reactor's (or proxy's)
 * application and its permissions and access rules, never the caller's. Each call checks the route's
 * permission as the API-key guard would, then the services check containers as for any request.
 */
@Injectable()
export class BtBridge {
  constructor(
    private readonly tokens: TokensService,
    private readonly tokenizer: TokenizeService,
    private readonly updates: TokenUpdates,
  ) {}

  handlers(principal: Principal): Record<string, HostHandler> {
    const json = async (work: Promise<unknown>): Promise<JsonValue> => (await work) as JsonValue;
    return {
      'bt.tokens.create': ([body]) =>
        json(this.tokens.create(allowed(principal, 'token:create'), object(body))),
      'bt.tokens.retrieve': ([id]) => json(this.tokens.get(allowed(principal, 'token:read'), text(id))),
      'bt.tokens.update': ([id, patch]) =>
        json(this.updates.update(allowed(principal, 'token:update'), text(id), object(patch))),
      'bt.tokens.delete': async ([id]) => {
        await this.tokens.delete(allowed(principal, 'token:delete'), text(id));
        return null;
      },
      'bt.tokens.list': ([query]) => {
        const { metadata, ...rest } = object(query ?? {});
        const filters = metadata === undefined ? {} : stringMap(metadata);
        return json(
          this.tokens.list(
            allowed(principal, 'token:read'),
            validatePlain(ListTokensQueryDto, rest),
            filters,
          ),
        );
      },
      'bt.tokenize': ([body]) => json(this.tokenizer.tokenize(allowed(principal, 'token:create'), body)),
    };
  }
}

function allowed(principal: Principal, permission: Permission): Principal {
  if (!principal.permissions.has(permission)) {
    throw ApiError.forbidden(`The reactor's application does not have ${permission}.`);
  }
  return principal;
}

function object(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw ApiError.badRequest('The request body must be an object.');
  }
  return value as Record<string, unknown>;
}

function text(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw ApiError.badRequest('A token id is required.');
  }
  return value;
}

function stringMap(value: unknown): Record<string, string> {
  const entries = Object.entries(object(value));
  if (!entries.every(([, v]) => typeof v === 'string')) {
    throw ApiError.badRequest('metadata filters must be strings.');
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
