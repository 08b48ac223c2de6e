import { Injectable } from '@nestjs/common';
import { LessThanOrEqual } from 'typeorm';
import { Clock } from '../common/clock';
import { ClaimOnceQueue, ClaimOnceTable } from '../database/claim-once-queue';
import { Database } from '../database/database.service';
import { ReactorRun } from './reactor-run.entity';

/** Claimed once: `running` from the claim on, never leased, so a run is never started twice. */
const RUN_QUEUE: ClaimOnceTable = {
  table: 'reactor_runs',
  returning: ['reactor_id', 'request'],
  claimedStatus: 'running',
  claimedAt: 'started_at',
  order: 'created_at',
  doneAt: 'completed_at',
  clearedWhenDone: ['request'],
};

/** A run claimed for this replica: its sealed arguments. */
export interface ClaimedRun {
  tenant_id: string;
  id: string;
  reactor_id: string;
  request: Buffer;
}

/** Asynchronous reactor runs: the rows, and the claim-once queue they wait in. */
@Injectable()
export class ReactorRunsRepository {
  readonly queue: ClaimOnceQueue<ClaimedRun>;

  constructor(
    private readonly db: Database,
    clock: Clock,
  ) {
    this.queue = new ClaimOnceQueue(db, clock, RUN_QUEUE);
  }

  async insert(run: ReactorRun): Promise<void> {
    await this.db.repository(ReactorRun).insert(run);
  }

  /** The run, if `createdBy` started it. */
  findStartedBy(
    tenantId: string,
    reactorId: string,
    id: string,
    createdBy: string,
  ): Promise<ReactorRun | null> {
    return this.db.repository(ReactorRun).findOne({ where: { tenantId, id, reactorId, createdBy } });
  }

  /** Every tenant's runs expired at `now`, deleted: how many. */
  async deleteExpired(now: Date): Promise<number> {
    const result = await this.db.repository(ReactorRun).delete({ expiresAt: LessThanOrEqual(now) });
    return result.affected ?? 0;
  }
}
