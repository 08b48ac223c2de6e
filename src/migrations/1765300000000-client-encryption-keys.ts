import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Client encryption keys (issue 41): X25519 pairs a browser encrypts token data to. The private key is sealed
 * under the tenant's data key like token data; the public key is kept in the clear (it is public). A tenant's
 * own management application gets the key permissions, as it holds every other management one.
 */
export class ClientEncryptionKeys1765300000000 implements MigrationInterface {
  name = 'ClientEncryptionKeys1765300000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE client_encryption_keys (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id uuid NOT NULL,
      public_key text NOT NULL,
      private_key bytea NOT NULL,
      expires_at timestamptz NOT NULL,
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_by uuid,
      modified_at timestamptz,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(
      `UPDATE applications SET permissions = permissions || $1::jsonb
        WHERE type = 'management' AND permissions @> $2::jsonb AND NOT permissions @> $1::jsonb`,
      [JSON.stringify(KEY_PERMISSIONS), JSON.stringify(MANAGEMENT_PERMISSIONS)],
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE client_encryption_keys');
    await q.query(
      `UPDATE applications SET permissions = (SELECT coalesce(jsonb_agg(p), '[]'::jsonb)
         FROM jsonb_array_elements(permissions) p WHERE NOT p <@ $1::jsonb)
        WHERE type = 'management'`,
      [JSON.stringify(KEY_PERMISSIONS)],
    );
  }
}

// Spelled out rather than imported: a migration must keep meaning what it meant when it was written.
const KEY_PERMISSIONS = ['keys:create', 'keys:read', 'keys:delete'];
const MANAGEMENT_PERMISSIONS = [
  'application:create',
  'application:read',
  'application:update',
  'application:delete',
  'tenant:read',
  'tenant:update',
  'webhook:create',
  'webhook:read',
  'webhook:update',
  'webhook:delete',
];
