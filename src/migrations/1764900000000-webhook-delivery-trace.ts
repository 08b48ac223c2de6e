import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * With traces on, a webhook delivery keeps the W3C `traceparent` of the span that published its event (the
 * request that changed something), so the delivery's own span links back to it. Only that: a version-00
 * traceparent the vault builds from its span's ids, never `tracestate` or baggage, which callers write.
 * The check holds the column to that form. Null with traces off, and for deliveries from before.
 */
export class WebhookDeliveryTrace1764900000000 implements MigrationInterface {
  name = 'WebhookDeliveryTrace1764900000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_deliveries ADD COLUMN traceparent text
         CONSTRAINT webhook_deliveries_traceparent CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$')`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE webhook_deliveries DROP COLUMN traceparent');
  }
}
