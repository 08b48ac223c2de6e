import { Column, Entity, PrimaryColumn } from 'typeorm';

export type ReactorRunStatus = 'pending' | 'running' | 'completed' | 'failed';

/** One asynchronous invocation: its sealed arguments, then its sealed answer (see the migration). */
@Entity('reactor_runs')
export class ReactorRun {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'reactor_id' })
  reactorId: string;

  @Column('text')
  status: ReactorRunStatus;

  @Column('bytea', { nullable: true })
  request: Buffer | null;

  @Column('bytea', { nullable: true })
  result: Buffer | null;

  /** The application that started the run: the only one that may read its result. */
  @Column('uuid', { name: 'created_by' })
  createdBy: string;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('timestamptz', { name: 'started_at', nullable: true })
  startedAt: Date | null;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt: Date | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;
}
