import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Injectable } from '@nestjs/common';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { BtBridge } from '../sandbox-bridges/bt-bridge';
import { FetchBridge } from '../sandbox-bridges/fetch-bridge';
import { failureToError } from '../sandbox/sandbox-outcome';
import { HostHandler, JsonValue, SandboxProvider } from '../sandbox/sandbox.provider';
import { PendingReplay, ReplayChecked } from '../idempotency/discloses';
import { DetokenizeService } from '../tokens/detokenize.service';
import { TokenizeService } from '../tokens/tokenize.service';
import { ReactRequestDto, ReactResponseDto } from './dto/react.dto';
import { prepareArgs } from './react-args';
import { LoadedReactor } from './load-reactor';
import { ReactorsService } from './reactors.service';

/** POST /reactors/<id>/react: spec §4.4 invocation rules, in the spec's order. */
@Injectable()
export class ReactService {
  constructor(
    private readonly reactors: ReactorsService,
    private readonly applications: ApplicationPrincipals,
    private readonly detokenizer: DetokenizeService,
    private readonly tokenizer: TokenizeService,
    private readonly sandbox: SandboxProvider,
    private readonly bt: BtBridge,
    private readonly fetch: FetchBridge,
    private readonly audit: AuditService,
  ) {}

  /**
   * `signal`: aborted when the caller has gone, so a run still waiting for a worker is dropped. `replay`: a
   * keyed retry of a reaction that already ran: the same checks and audit, then its kept answer instead of a
   * second run of the code (whose calls out, a payment say, must happen once).
   */
  async react(
    caller: Principal,
    id: string,
    body: ReactRequestDto,
    signal?: AbortSignal,
    replay?: PendingReplay,
  ): Promise<ReactResponseDto | ReplayChecked> {
    // The reactor and the tokens are read at once (two round trips in the time of one), but answered in the
    // spec's order: an unknown reactor is a 404 whatever its arguments, and nothing is recorded for it, since
    // no token data reached anyone.
    const loading = this.reactors.load(caller.tenantId, id);
    const reading = this.detokenizer.detokenizeUnrecorded(caller, body.args ?? {});
    reading.catch(() => undefined);
    const loaded = await loading;
    const { value, record } = await reading;
    let args: { [key: string]: JsonValue };
    try {
      args = this.prepared(loaded, value);
    } catch (err) {
      // Refused before the code ran: the tokens were still read for this caller, so that is recorded.
      if (record !== null) {
        await this.audit.record(record);
      }
      throw err;
    }
    // The tokens used and the invocation (or the replay), in one statement. The code runs while it is
    // written, but nothing leaves before it is durable: not the answer (or a failure's message), not a host
    // call (fetch, bt). A record that cannot be written answers 503 whatever the run did.
    const message = replay === undefined ? 'Reactor invoked' : 'Reactor result replayed';
    const invoked = auditEvent(caller, 'reactor', id, 'react', message);
    const recording = this.audit.recordAll(record === null ? [invoked] : [record, invoked]);
    if (replay !== undefined) {
      await recording;
      return replay.checked();
    }
    return this.run(caller.tenantId, loaded, args, signal, recording);
  }

  /**
   * Spec §4.4 rules 5 and 6 first (detokenization with the caller's token:use, at most 100 tokens), then
   * 1-4 for a formula reactor; a code reactor gets its arguments as sent, detokenized.
   */
  async argsFor(
    caller: Principal,
    loaded: LoadedReactor,
    body: ReactRequestDto,
  ): Promise<{ [key: string]: JsonValue }> {
    return this.prepared(loaded, await this.detokenizer.detokenize(caller, body.args ?? {}));
  }

  private prepared(loaded: LoadedReactor, detokenized: unknown): { [key: string]: JsonValue } {
    if (loaded.parameters === null) {
      // The DTO admits objects only, and detokenization keeps the shape.
      return detokenized as { [key: string]: JsonValue };
    }
    return prepareArgs(loaded.parameters, detokenized);
  }

  /**
   * Runs the reactor's code on prepared arguments and tokenizes its `tokenize` output. `recorded`: the run's
   * audit records being written; host calls wait for it, and so does the answer, a failure's included.
   */
  async run(
    tenantId: string,
    loaded: LoadedReactor,
    args: { [key: string]: JsonValue },
    signal?: AbortSignal,
    recorded: Promise<void> = Promise.resolve(),
  ): Promise<ReactResponseDto> {
    // Rejections are taken below, after the run; until then nobody else awaits it.
    recorded.catch(() => undefined);
    const { reactor, code, configuration, timeoutMs } = loaded;
    const application =
      reactor.applicationId === null
        ? null
        : await this.applications.principalFor(tenantId, reactor.applicationId);
    const running = this.sandbox.run({
      tenantId,
      signal,
      code,
      timeoutMs,
      req: { args, configuration: configuration as { [key: string]: JsonValue } },
      bt: application === null ? undefined : afterRecorded(this.bt.handlers(application), recorded),
      host: afterRecorded(this.fetch.handlers(), recorded),
    });
    const [ran, audited] = await Promise.allSettled([running, recorded]);
    if (audited.status === 'rejected') {
      throw audited.reason;
    }
    if (ran.status === 'rejected') {
      throw ran.reason;
    }
    const outcome = ran.value;
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

/** Host calls that wait for the run's audit records: no data leaves the sandbox before they are durable. */
function afterRecorded(
  handlers: Record<string, HostHandler>,
  recorded: Promise<void>,
): Record<string, HostHandler> {
  const gated: Record<string, HostHandler> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    gated[name] = async (args) => {
      await recorded;
      return handler(args);
    };
  }
  return gated;
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
