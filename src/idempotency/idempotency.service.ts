import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Counter } from 'prom-client';
import { ApiError } from '../common/api-error';
import { causeOf } from '../common/supervisor';
import { MetricsService } from '../metrics/metrics.service';
import { captureResponse, replay } from './captured-response';
import { IdempotencyStore } from './idempotency.store';

export const IDEMPOTENCY_HEADER = 'bt-idempotency-key';
const METHODS = new Set(['POST', 'PUT', 'PATCH']);
const KEY = /^[\x21-\x7e]{1,255}$/;

/** Who the stored answer belongs to. */
export interface IdempotencyScope {
  tenantId: string;
  /** The caller: an application id, or `proxy:<id>` for a proxy that needs no key. */
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
      help: 'Requests with an idempotency key, by outcome (stored, replayed, failed, in_flight, mismatch)',
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
   * Either replays the stored answer on `res` (returns false: do nothing more) or claims the key and watches
   * `res`, so the answer is stored (success) or the claim released (failure) as it is sent (returns true).
   */
  async handle(
    req: Request,
    res: Response,
    key: string,
    who: IdempotencyScope,
    bodyHash: string,
  ): Promise<boolean> {
    let begun;
    try {
      begun = await this.store.begin({ ...who, key, method: req.method, path: req.originalUrl, bodyHash });
    } catch (err) {
      if (err instanceof ApiError) {
        this.outcomes.inc({ outcome: err.status === 409 ? 'in_flight' : 'mismatch' });
      }
      throw err;
    }
    if (begun.kind === 'replay') {
      if (begun.response === null) {
        throw new ApiError(
          409,
          'A request with this idempotency key succeeded, but its answer was too large to keep: it cannot be replayed.',
        );
      }
      this.outcomes.inc({ outcome: 'replayed' });
      replay(res, begun.response);
      return false;
    }
    const { ticket } = begun;
    captureResponse(res, async (captured) => {
      const succeeded = res.statusCode < 400;
      try {
        await (succeeded ? this.store.complete(ticket, captured) : this.store.abandon(ticket));
        this.outcomes.inc({ outcome: succeeded ? 'stored' : 'failed' });
      } catch (err) {
        // The work is done and answered; a retry meanwhile gets 409 until the claim goes stale.
        this.logger.warn(`recording an idempotent answer failed: ${causeOf(err)}`);
      }
    });
    return true;
  }
}
