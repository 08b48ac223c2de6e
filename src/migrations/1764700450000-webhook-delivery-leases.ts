import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair webhook delivery (WebhookDeliveriesRepository.claim). `leased_until` marks a delivery a sender is
 * attempting right now (cleared when it settles; a lapsed one is a dead sender's), so the claim can count a
 * tenant's deliveries in flight over every replica and hold it to its share. The claim walks due deliveries
 * tenant by tenant, so the due index leads with the tenant.
 */
export class WebhookDeliveryLeases1764700450000 implements MigrationInterface {
  name = 'WebhookDeliveryLeases1764700450000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz');
    await q.query(
      `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (tenant_id)
        WHERE status = 'pending' AND leased_until IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_tenant_due ON webhook_deliveries (tenant_id, next_attempt_at)
        WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX webhook_deliveries_due');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query('DROP INDEX webhook_deliveries_tenant_due');
    await q.query('DROP INDEX webhook_deliveries_leased');
    await q.query('ALTER TABLE webhook_deliveries DROP COLUMN leased_until');
  }
}
