import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What GET/PUT/DELETE /tenants/self need: settings, a security contact, who changed the tenant last, and a
 * soft delete (`deleted_at`) that the purge job completes after the grace period.
 */
export class TenantSelf1764400100000 implements MigrationInterface {
  name = 'TenantSelf1764400100000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants
      ADD COLUMN settings jsonb NOT NULL DEFAULT '{}',
      ADD COLUMN security_contact_email text,
      ADD COLUMN modified_by uuid,
      ADD COLUMN modified_at timestamptz,
      ADD COLUMN deleted_at timestamptz`);
    await q.query('CREATE INDEX tenants_deleted ON tenants (deleted_at) WHERE deleted_at IS NOT NULL');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX tenants_deleted');
    await q.query(`ALTER TABLE tenants DROP COLUMN settings, DROP COLUMN security_contact_email,
      DROP COLUMN modified_by, DROP COLUMN modified_at, DROP COLUMN deleted_at`);
  }
}
