import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Counter } from 'prom-client';
import type { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { causeOf } from '../common/supervisor';
import { MetricsService } from '../metrics/metrics.service';
import { beforeAnswered, CapturedResponse, captureResponse, replay } from './captured-response';
import { DisclosureReplay, PendingReplay, ReplayingRequest } from './discloses';
import { Begun, IdempotencyStore, OpeningClaim } from './idempotency.store';

export const IDEMPOTENCY_HEADER = 'bt-idempotency-key';
const METHODS = new Set(['POST', 'PUT', 'PATCH']);
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Whose key space a key is looked up in: the caller's, for one destination on /proxy. */
export interface IdempotencyScope {
  tenantId: string;
  /** The calling application's id, followed on /proxy by the destination (see `scopeOf`). */
  scope: string;
}

/**
 * BT-IDEMPOTENCY-KEY on POST, PUT and PATCH: the first request with a key runs, and its successful answer is
 * replayed byte for byte to a retry with the same key for 24 hours. The Nest routes get this from
 * IdempotencyInterceptor, /proxy from its forwarder, both through `handle`.
 */
@Injectable()
export class Idempotency {
  private readonly logger = new Logger('Idempotency');
  private readonly outcomes: Counter<'outcome'>;

  constructor(
    private readonly store: IdempotencyStore,
    metrics: MetricsService,
  ) {
    this.outcomes = new Counter({
      name: 'token_vault_idempotent_requests_total',
      help: 'Requests with an idempotency key, by outcome (stored, replayed, rerun, failed, in_flight, mismatch)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  /** The request's key, or null when it has none or its method takes none; a malformed key is a 400. */
  keyOf(req: Request): string | null {
    const header = req.headers[IDEMPOTENCY_HEADER];
    if (header === undefined || !METHODS.has(req.method)) {
      return null;
    }
    if (typeof header !== 'string' || !KEY.test(header)) {
      throw ApiError.field(
        'BT-IDEMPOTENCY-KEY',
        'must be one header of 1 to 255 visible ASCII characters (a UUID, for example)',
      );
    }
    return header;
  }

  /**
   * The key space of an authenticated caller, and on /proxy of one destination too (`proxy:<id>` or
   * `url:<hash>`), so a key sent to proxy B never finds proxy A's answer. A public key is shared by every
   * browser that loads it, so its holders would share answers: its requests take no key (400).
   */
  scopeOf(principal: Principal, destination?: string): IdempotencyScope {
    if (principal.applicationType === 'public') {
      throw notAccepted(
        'A public API key, which many callers share, keeps no answers for BT-IDEMPOTENCY-KEY: send the ' +
          'request without it.',
      );
    }
    const { tenantId, applicationId } = principal;
    return { tenantId, scope: destination === undefined ? applicationId : `${applicationId} ${destination}` };
  }

  /** A proxy that needs no API key has no caller to keep an answer for: refused, so no retry runs twice unseen. */
  refuseAnonymous(): never {
    throw notAccepted(
      'A proxy that needs no API key (require_auth: false) keeps no answers for BT-IDEMPOTENCY-KEY: send the ' +
        'request without it, or with a BT-API-KEY through a proxy that requires one.',
    );
  }

  /**
   * For the routes whose work cannot roll back (/proxy, a reaction; every other route: AtomicWrites): the
   * claim commits before the work, so a retry never runs it twice while it may still run (409 meanwhile, and
   * for STALE_MARGIN_MS past the longest route time limit if the process died).
   * Either replays the stored answer on `res` (returns false: do nothing more) or claims the key and watches
   * `res`, so the answer is stored (success) or the claim released (failure) as it is sent (returns true).
   * A route that discloses token data (@Discloses) is never answered from the store alone. `rerun`: it keeps
   * no answer, only that it succeeded, and its retry runs again (returns true), under today's tokens and
   * access rules, audited as the read it is. `recheck`: its answer is kept, and a retry gets it on
   * `req.pendingReplay` (returns true): the route checks and audits it, then `replayChecked` sends it.
   */
  async handle(
    req: Request,
    res: Response,
    key: string,
    who: IdempotencyScope,
    bodyHash: string,
    discloses?: DisclosureReplay,
  ): Promise<boolean> {
    const begun = await this.begin(req, key, who, bodyHash);
    if (begun.kind === 'replay') {
      return this.replayOrRun(req, res, begun.response, discloses);
    }
    const { ticket } = begun;
    const record = async (captured: CapturedResponse | null): Promise<void> => {
      const succeeded = res.statusCode < 400;
      try {
        await (succeeded ? this.store.complete(ticket, captured) : this.store.abandon(ticket));
        this.count(succeeded ? 'stored' : 'failed');
      } catch (err) {
        // The work is done and answered; a retry meanwhile gets 409 until the claim goes stale (staleAfterMs).
        this.logger.warn(`recording an idempotent answer failed: ${causeOf(err)}`);
      }
    };
    if (discloses === 'rerun') {
      beforeAnswered(res, () => record(null));
    } else {
      captureResponse(res, record);
    }
    return true;
  }

  /** Claims the key, counting refusals (409, 422). */
  begin(req: Request, key: string, who: IdempotencyScope, bodyHash: string): Promise<Begun> {
    return this.counted(
      this.store.begin({ ...who, key, method: req.method, path: req.originalUrl, bodyHash }),
    );
  }

  /**
   * The claim as the opening statement of the transaction of the work (see AtomicWrites), and what its rows
   * mean, counting refusals as `begin` does.
   */
  openingClaim(req: Request, key: string, who: IdempotencyScope, bodyHash: string): OpeningClaim {
    const opening = this.store.openingClaim({
      ...who,
      key,
      method: req.method,
      path: req.originalUrl,
      bodyHash,
    });
    return { statement: opening.statement, begun: (rows) => this.counted(opening.begun(rows)) };
  }

  private async counted(begun: Promise<Begun>): Promise<Begun> {
    try {
      return await begun;
    } catch (err) {
      if (err instanceof ApiError) {
        this.count(err.status === 409 ? 'in_flight' : 'mismatch');
      }
      throw err;
    }
  }

  /**
   * A retry that found the key answered: replays the answer on `res` (false: do nothing more), or says the
   * route runs (true): again (`rerun`), or to check the answer it is given on `req.pendingReplay` (`recheck`).
   */
  replayOrRun(
    req: Request,
    res: Response,
    response: CapturedResponse | null,
    discloses?: DisclosureReplay,
  ): boolean {
    if (discloses === 'rerun') {
      // Also ignores an answer kept before the route was marked: a disclosure is never replayed.
      this.count('rerun');
      return true;
    }
    if (response === null) {
      throw new ApiError(
        409,
        'A request with this idempotency key succeeded, but its answer was too large to keep: it cannot be replayed.',
      );
    }
    if (discloses === 'recheck') {
      (req as ReplayingRequest).pendingReplay = new PendingReplay(response);
      return true;
    }
    this.count('replayed');
    replay(res, response);
    return false;
  }

  count(outcome: 'stored' | 'replayed' | 'rerun' | 'failed' | 'in_flight' | 'mismatch'): void {
    this.outcomes.inc({ outcome });
  }

  /** Sends the kept answer of a `recheck` route once the route has checked it under today's rules. */
  replayChecked(res: Response, pending: PendingReplay): void {
    if (!pending.isChecked) {
      // A route marked `recheck` that ignored its PendingReplay: never hand out what it did not check.
      throw new Error('A kept answer was about to be replayed without the route checking it');
    }
    this.count('replayed');
    replay(res, pending.answer);
  }
}

/** A 400 naming the header, for a caller whose answers are not kept. */
function notAccepted(detail: string): ApiError {
  return ApiError.badRequest(detail, { 'BT-IDEMPOTENCY-KEY': ['is not accepted for this caller'] });
}
