import { Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { isUUID } from 'class-validator';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ClientKeysService } from '../client-keys/client-keys.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { Database } from '../database/database.service';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { TokenBuilder } from '../tokens/token-builder.service';
import { OpenedTokenIntent, TokenIntentConversion } from '../tokens/token-intent-conversion.service';
import { bankDetails, cardDetails } from './card-details';
import { CreateTokenIntentDto, TokenIntentDto } from './dto/token-intent.dto';
import { TokenIntentRepository, TokenIntentRow } from './token-intent.repository';

/** The sealing kind of token intent data (TenantCipher): an intent's blob never opens as a token's. */
const INTENT_SEAL = 'token-intent';

/** How long an intent lives unless converted or deleted (the hosted vault's default). */
export const TOKEN_INTENT_TTL_MS = 24 * 60 * 60 * 1000;

/** Token intents: created from a page, read and deleted by a backend, converted by POST /tokens. */
@Injectable()
export class TokenIntentsService implements OnModuleInit {
  constructor(
    private readonly intents: TokenIntentRepository,
    private readonly builder: TokenBuilder,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly conversion: TokenIntentConversion,
    private readonly db: Database,
    private readonly clientKeys: ClientKeysService,
  ) {}

  onModuleInit(): void {
    this.conversion.register({
      open: (tenantId, id) => this.open(tenantId, id),
      consume: (principal, id) => this.consume(principal, id),
    });
  }

  async create(principal: Principal, dto: CreateTokenIntentDto): Promise<TokenIntentDto> {
    const now = this.clock.now();
    const { tenantId } = principal;
    // The DTO may carry `encrypted: undefined`; only a sent `encrypted` is opened.
    const { type, data, encrypted } = dto;
    const body = await this.clientKeys.openTokenBody(
      tenantId,
      encrypted === undefined ? { type, data } : { type, data, encrypted },
    );
    const intent = await this.builder.intentOf(tenantId, { type: body.type, data: body.data }, now);
    const id = randomUUID();
    const row: TokenIntentRow = {
      tenantId,
      id,
      type: intent.type,
      data: await this.cipher.sealJson(INTENT_SEAL, tenantId, id, intent.data),
      fingerprint: intent.fingerprint,
      details: detailsOf(intent.type, intent.data),
      createdBy: principal.applicationId,
      createdAt: now,
      expiresAt: new Date(now.getTime() + TOKEN_INTENT_TTL_MS),
    };
    await this.db.transaction(async () => {
      await this.intents.insert(row);
      await this.audit.record(auditEvent(principal, 'token_intent', id, 'create', 'Token intent created'));
    });
    return present(row);
  }

  async get(principal: Principal, id: string): Promise<TokenIntentDto> {
    const row = await this.intents.find(principal.tenantId, id, this.clock.now());
    if (row === null) {
      throw ApiError.notFound('Token intent');
    }
    await this.audit.record(auditEvent(principal, 'token_intent', id, 'read', 'Token intent read'));
    return present(row);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.intents.delete(principal.tenantId, id, this.clock.now()))) {
        throw ApiError.notFound('Token intent');
      }
      await this.audit.record(auditEvent(principal, 'token_intent', id, 'delete', 'Token intent deleted'));
    });
  }

  /** Deletes every intent past its expiry; how many. */
  purgeExpired(now: Date): Promise<number> {
    return this.intents.purgeExpired(now);
  }

  private async open(tenantId: string, id: string): Promise<OpenedTokenIntent | null> {
    if (!isUUID(id)) {
      return null;
    }
    const row = await this.intents.find(tenantId, id, this.clock.now());
    if (row === null) {
      return null;
    }
    return { id, type: row.type, data: await this.cipher.openJson(INTENT_SEAL, tenantId, id, row.data) };
  }

  private async consume(principal: Principal, id: string): Promise<boolean> {
    if (!(await this.intents.delete(principal.tenantId, id, this.clock.now()))) {
      return false;
    }
    await this.audit.record(
      auditEvent(principal, 'token_intent', id, 'convert', 'Token intent converted into a token'),
    );
    return true;
  }
}

function detailsOf(type: string, data: unknown): Record<string, unknown> | null {
  if (type === 'card') {
    return { card: cardDetails(data) };
  }
  if (type === 'bank') {
    return { bank: bankDetails(data) };
  }
  return null;
}

function present(row: TokenIntentRow): TokenIntentDto {
  const { id, type, fingerprint, details } = row;
  const times = { created_at: row.createdAt.toISOString(), expires_at: row.expiresAt.toISOString() };
  return { id, tenant_id: row.tenantId, type, ...details, fingerprint, created_by: row.createdBy, ...times };
}
