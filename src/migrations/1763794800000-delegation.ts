import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Applications grant only what they hold (README, Security notes). A management application's rules now
 * say which token access it may delegate; a tenant's own management application (the one created with the
 * tenant, holding every management permission) keeps delegating everything, as it could before. Other
 * management applications delegate no token access until a holder of it grants them rules.
 */
export class Delegation1763794800000 implements MigrationInterface {
  name = 'Delegation1763794800000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE applications SET rules = $1::jsonb
        WHERE type = 'management' AND rules = '[]'::jsonb AND permissions @> $2::jsonb`,
      [JSON.stringify([DELEGATE_ALL]), JSON.stringify(MANAGEMENT_PERMISSIONS)],
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE applications SET rules = '[]'::jsonb WHERE type = 'management' AND rules = $1::jsonb`,
      [JSON.stringify([DELEGATE_ALL])],
    );
  }
}

// Spelled out rather than imported: a migration must keep meaning what it meant when it was written.
const DELEGATE_ALL = {
  description: 'May grant any token access to the applications it manages',
  priority: 1,
  container: '/',
  transform: 'reveal',
  permissions: ['token:create', 'token:update', 'token:read', 'token:delete', 'token:use', 'token:search'],
};
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
  'tenant:member:read',
  'tenant:member:update',
  'tenant:member:delete',
  'tenant:invitation:create',
  'tenant:invitation:read',
  'tenant:invitation:update',
  'tenant:invitation:delete',
];
