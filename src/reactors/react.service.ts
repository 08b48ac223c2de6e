import { Injectable } from '@nestjs/common';
import { ApplicationsService } from '../applications/applications.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { BtBridge } from '../sandbox-bridges/bt-bridge';
import { FetchBridge } from '../sandbox-bridges/fetch-bridge';
import { failureToError } from '../sandbox/sandbox-outcome';
import { JsonValue, SandboxProvider } from '../sandbox/sandbox.provider';
import { DetokenizeService } from '../tokens/detokenize.service';
import { TokenizeService } from '../tokens/tokenize.service';
import { ReactRequestDto, ReactResponseDto } from './dto/react.dto';
import { prepareArgs } from './react-args';
import { ReactorsService } from './reactors.service';

/** POST /reactors/<id>/react: spec §4.4 invocation rules, in the spec's order. */
@Injectable()
export class ReactService {
  constructor(
    private readonly reactors: ReactorsService,
    private readonly applications: ApplicationsService,
    private readonly detokenizer: DetokenizeService,
    private readonly tokenizer: TokenizeService,
    private readonly sandbox: SandboxProvider,
    private readonly bt: BtBridge,
    private readonly fetch: FetchBridge,
  ) {}

  /** `signal`: aborted when the caller has gone, so a run still waiting for a worker is dropped. */
  async react(
    caller: Principal,
    id: string,
    body: ReactRequestDto,
    signal?: AbortSignal,
  ): Promise<ReactResponseDto> {
    const { reactor, formula, configuration } = await this.reactors.load(caller.tenantId, id);
    // Rules 5 and 6 first (detokenization with the caller's token:use, at most 100 tokens), then 1-4.
    const detokenized = await this.detokenizer.detokenize(caller, body.args ?? {});
    const args = prepareArgs(formula.requestParameters, detokenized);
    const application =
      reactor.applicationId === null
        ? null
        : await this.applications.principalFor(caller.tenantId, reactor.applicationId);
    const outcome = await this.sandbox.run({
      tenantId: caller.tenantId,
      signal,
      code: formula.code,
      req: { args, configuration: configuration as { [key: string]: JsonValue } },
      bt: application === null ? undefined : this.bt.handlers(application),
      host: this.fetch.handlers(),
    });
    if (!outcome.ok) {
      throw failureToError(outcome.error);
    }
    const { raw, tokenize } = resultOf(outcome.value);
    if (tokenize === undefined || tokenize === null) {
      return { tokens: null, raw };
    }
    if (application === null) {
      throw ApiError.badRequest(
        'The code returned `tokenize`, but the reactor has no application to tokenize with.',
      );
    }
    return { tokens: await this.tokenizer.tokenize(application, tokenize), raw };
  }
}

function resultOf(value: JsonValue): { raw: JsonValue; tokenize: JsonValue | undefined } {
  if (value === null) {
    return { raw: null, tokenize: undefined };
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError(500, 'The reactor code must return an object such as { raw, tokenize }.', {
      error: ['The code returned a value that is not an object.'],
    });
  }
  return { raw: value.raw ?? null, tokenize: value.tokenize };
}
