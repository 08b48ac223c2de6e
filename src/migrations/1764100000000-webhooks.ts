import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks and their outbox. A webhook's signing secret is sealed under the tenant's data key (it has to be
 * read back to sign). Each event a change publishes becomes one delivery row per subscribed webhook, written
 * in the transaction of the change, so a change that commits is delivered (at least once, also after a
 * restart) and a rolled-back one never is. Payloads hold ids, types and timestamps only, never token data.
 * A tenant's own management application gets the webhook permissions, as it holds every other one.
 */
export class Webhooks1764100000000 implements MigrationInterface {
  name = 'Webhooks1764100000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id uuid NOT NULL,
      name text NOT NULL,
      url text NOT NULL,
      notify_email text,
      events text[] NOT NULL,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      secret bytea NOT NULL,
      consecutive_failures integer NOT NULL DEFAULT 0,
      failing_since timestamptz,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE TABLE webhook_deliveries (
      tenant_id uuid NOT NULL,
      id uuid NOT NULL,
      webhook_id uuid NOT NULL,
      event_id uuid NOT NULL,
      event_type text NOT NULL,
      payload text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz NOT NULL,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE
    )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await q.query('CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (tenant_id, webhook_id)');
    await q.query(
      `UPDATE applications SET permissions = permissions || $1::jsonb
        WHERE type = 'management' AND permissions @> $2::jsonb AND NOT permissions @> $1::jsonb`,
      [JSON.stringify(WEBHOOK_PERMISSIONS), JSON.stringify(MANAGEMENT_PERMISSIONS)],
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE webhook_deliveries');
    await q.query('DROP TABLE webhooks');
    await q.query(
      `UPDATE applications SET permissions = (SELECT coalesce(jsonb_agg(p), '[]'::jsonb)
         FROM jsonb_array_elements(permissions) p WHERE NOT p <@ $1::jsonb)
        WHERE type = 'management'`,
      [JSON.stringify(WEBHOOK_PERMISSIONS)],
    );
  }
}

// Spelled out rather than imported: a migration must keep meaning what it meant when it was written.
const WEBHOOK_PERMISSIONS = ['webhook:create', 'webhook:read', 'webhook:update', 'webhook:delete'];
const MANAGEMENT_PERMISSIONS = [
  'application:create',
  'application:read',
  'application:update',
  'application:delete',
  'reactor:create',
  'reactor:read',
  'reactor:update',
  'reactor:delete',
  'proxy:create',
  'proxy:read',
  'proxy:update',
  'proxy:delete',
  'tenant:read',
  'tenant:update',
];
