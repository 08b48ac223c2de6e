import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * GIN fast update parks new entries in a pending list that every search scans until a VACUUM merges it; the
 * embedded database never vacuums on its own, so insert straight into the index instead.
 */
export class TokensMaintenance1763776800000 implements MigrationInterface {
  name = 'TokensMaintenance1763776800000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER INDEX tokens_live_metadata SET (fastupdate = off)');
    // Turning fastupdate off keeps what is already pending: merge it now.
    await q.query(`SELECT gin_clean_pending_list('tokens_live_metadata'::regclass)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER INDEX tokens_live_metadata RESET (fastupdate)');
  }
}
