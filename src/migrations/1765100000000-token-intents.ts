import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Token intents: data a page collected (a public application's key may create one), sealed like token data,
 * kept until a backend converts it into a token (POST /tokens with token_intent_id deletes it) or until
 * expires_at, when the purge job deletes it. `details` holds what the answer shows besides the id: for a
 * card its bin, last4, brand and expiration, never the number or the CVC.
 */
export class TokenIntents1765100000000 implements MigrationInterface {
  name = 'TokenIntents1765100000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE token_intents (
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        id uuid NOT NULL,
        type text NOT NULL,
        data bytea NOT NULL,
        fingerprint text NOT NULL,
        details jsonb,
        created_by uuid,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, id)
      )`);
    await q.query('CREATE INDEX token_intents_expires_at ON token_intents (expires_at)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE token_intents');
  }
}
