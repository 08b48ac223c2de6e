import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Histogram } from 'prom-client';
import type { Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { StatementPart } from '../database/composed-statement';
import { Database } from '../database/database.service';
import type { StatementBatcher } from '../database/statement-batcher';
import { MetricsService } from '../metrics/metrics.service';
import { actorOf, AuditEvent, recordedMessage, RequestOrigin } from './audit-event';
import { AuditRecordsRepository, RecordValues } from './audit-records.repository';
import { currentOrigin } from './request-origin';

/** Joins a record's token ids into one parameter: a control character, which no token id may contain. */
const TOKEN_ID_SEPARATOR = '\x1f';

/** An audit record as a part of a composed statement, and how its write went. */
export interface AuditPart extends StatementPart {
  written(ok: boolean): void;
}

/** The part of a presented API key kept when it fails: enough to tell attempts apart, far from the key. */
const KEY_PREFIX = /^key_[1-9A-HJ-NP-Za-km-z]{4}/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Writes the audit trail. `record()` inserts in the open transaction (Database), so a change that commits
 * has its record and a rolled-back one has none; outside a transaction (reads) it is its own statement,
 * awaited before the data is returned. Either way a record that cannot be written fails the action with a
 * 503: the vault does not act unaudited. The chain (seq, hashes) is added by AuditChain.seal().
 */
@Injectable()
export class AuditService {
  private readonly logger = new Logger('Audit');
  private readonly writes: Histogram<'outcome'>;
  /** Records written outside a transaction (reads'), many requests' in one statement. */
  private readonly standalone: StatementBatcher<RecordValues, void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    private readonly records: AuditRecordsRepository,
    private readonly clock: Clock,
    metrics: MetricsService,
  ) {
    this.standalone = db.batcher<RecordValues, void>(
      async (rows) => {
        await this.records.insertMany(rows);
        return rows.map(() => undefined);
      },
      // Per tenant: one statement never writes records of two tenants.
      { tenant: (row) => row[0] as string, conflictKey: (row) => row[1] as string, max: 64 },
    );
    this.writes = new Histogram({
      name: 'token_vault_audit_write_duration_seconds',
      help: 'Audit record writes by outcome (written, failed)',
      labelNames: ['outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [metrics.registry],
    });
    if (!config.audit.enabled) {
      this.logger.warn('AUDIT_ENABLED=false: no audit records are written. Only for a benchmark baseline.');
    }
  }

  /** One record of `event`, in the open transaction if any. */
  async record(event: AuditEvent, origin: RequestOrigin = currentOrigin()): Promise<void> {
    if (!this.config.audit.enabled) {
      return;
    }
    const end = this.writes.startTimer();
    try {
      const row = this.rowOf(event, origin);
      // In a transaction the record commits (or not) with the change; a read's record is its own statement,
      // shared with the other reads that arrive meanwhile (one insert and one commit for many).
      await (this.db.inTransaction ? this.records.insert(row) : this.standalone.submit(row));
      end({ outcome: 'written' });
    } catch (err) {
      end({ outcome: 'failed' });
      throw this.unwritten(err);
    }
  }

  /**
   * Records of several events of one request, sent together: outside a transaction they share one batch
   * (one statement) unless the batch is full. As with record(), the request fails with 503 unless all are
   * written.
   */
  async recordAll(events: readonly AuditEvent[], origin: RequestOrigin = currentOrigin()): Promise<void> {
    if (!this.config.audit.enabled || events.length === 0) {
      return;
    }
    if (events.length === 1 || this.db.inTransaction) {
      for (const event of events) {
        await this.record(event, origin);
      }
      return;
    }
    const end = this.writes.startTimer();
    try {
      await this.standalone.submitAll(events.map((event) => this.rowOf(event, origin)));
      end({ outcome: 'written' });
    } catch (err) {
      end({ outcome: 'failed' });
      throw this.unwritten(err);
    }
  }

  /**
   * The record of `event` as a part of the caller's own statement (composeStatement), which then writes the
   * change and its record in one round trip; null with auditing off. The caller reports how the statement
   * went with `written()`; when it failed for a reason the caller cannot pin on its own part, it writes the
   * change again step by step, where `record()` names an audit failure as such.
   */
  recordPart(event: AuditEvent, origin: RequestOrigin = currentOrigin()): AuditPart | null {
    if (!this.config.audit.enabled) {
      return null;
    }
    const end = this.writes.startTimer();
    return {
      ...this.records.insertStatement(this.rowOf(event, origin)),
      written: (ok) => end({ outcome: ok ? 'written' : 'failed' }),
    };
  }

  /**
   * Records an operator command (actor_type system) in the audit trail of each tenant it touched; every
   * tenant when `tenantIds` is 'all' (a master key concerns them all).
   */
  async recordOperatorAction(
    tenantIds: readonly string[] | 'all',
    operation: string,
    message: string,
  ): Promise<void> {
    for (const tenantId of tenantIds === 'all' ? await this.records.everyTenant() : tenantIds) {
      await this.record({
        tenantId,
        actor: null,
        entityType: 'tenant_key',
        entityId: null,
        operation,
        message,
      });
    }
  }

  private rowOf(event: AuditEvent, origin: RequestOrigin): RecordValues {
    const { actorId, actorType } = actorOf(event.actor);
    return [
      event.tenantId,
      randomUUID(),
      this.clock.now(),
      actorId,
      actorType,
      event.entityType,
      event.entityId,
      event.operation,
      event.outcome ?? 'success',
      recordedMessage(event),
      origin.requestId,
      origin.remoteAddress,
      origin.userAgent,
      event.tokenIds === undefined || event.tokenIds.length === 0
        ? null
        : event.tokenIds.join(TOKEN_ID_SEPARATOR),
    ];
  }

  private unwritten(err: unknown): ApiError {
    this.logger.error(
      { err: { code: (err as { code?: unknown }).code } },
      'audit record could not be written',
    );
    return new ApiError(503, 'The audit trail cannot be written right now: try again shortly.', undefined, {
      'Retry-After': '5',
    });
  }

  /**
   * After a 401 or 403 (called when the response is finished): a denied record for a known caller, a count
   * per key prefix and hour for an unknown one. Never throws; nothing of the request is awaited on it.
   */
  async recordRefusal(
    req: Request & { principal?: AuditEvent['actor'] },
    res: Response,
    origin: RequestOrigin,
  ): Promise<void> {
    if (!this.config.audit.enabled) {
      return;
    }
    try {
      const principal = req.principal;
      if (
        res.statusCode === 403 &&
        res.locals.refusalAudited !== true &&
        principal !== undefined &&
        principal !== null &&
        'tenantId' in principal
      ) {
        const route = (req.route as { path?: unknown } | undefined)?.path;
        await this.record(
          {
            tenantId: principal.tenantId,
            actor: principal,
            ...refusedEntity(req, typeof route === 'string' ? route : null),
            operation: `${req.method.toLowerCase()} ${typeof route === 'string' ? route : '<unmatched>'}`,
            outcome: 'denied',
            message: 'Permission or access rule denied the request',
          },
          origin,
        );
      } else if (res.statusCode === 401) {
        await this.countAuthFailure(req.headers['bt-api-key']);
      }
    } catch (err) {
      this.logger.error(
        { err: { type: err instanceof Error ? err.name : 'unknown' } },
        'refusal not audited',
      );
    }
  }

  private async countAuthFailure(presented: unknown): Promise<void> {
    const prefix =
      typeof presented !== 'string' || presented === ''
        ? '(none)'
        : (KEY_PREFIX.exec(presented)?.[0] ?? '(malformed)');
    const now = this.clock.now();
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
    await this.records.countAuthFailure(prefix, hour, now);
  }
}

/** The entity a refused request aimed at, from its route: `/tokens/:id` is the token with that id. */
function refusedEntity(req: Request, route: string | null): Pick<AuditEvent, 'entityType' | 'entityId'> {
  const first = (route ?? req.path).split('/').filter((s) => s !== '')[0] ?? '';
  const types: Record<string, AuditEvent['entityType']> = {
    tokens: 'token',
    tokenize: 'token',
    detokenize: 'token',
    applications: 'application',
    reactors: 'reactor',
    'reactor-formulas': 'reactor_formula',
    proxies: 'proxy',
    proxy: 'proxy',
    tenants: 'tenant',
    logs: 'log',
  };
  const params = req.params as Record<string, unknown> | undefined;
  // Only a UUID: a refused path may carry anything (a card number typed where an id belongs).
  const id = route !== null && typeof params?.id === 'string' && UUID.test(params.id) ? params.id : null;
  return { entityType: types[first] ?? 'tenant', entityId: id };
}
