import { MigrationInterface, QueryRunner } from 'typeorm';

const ASCII = /^[\x20-\x7e]*$/;

/**
 * E-mail addresses stored in their canonical form and compared exactly (no more lower() in indexes or
 * queries), and the table that counts invitation e-mails for their throttle.
 *
 * ASCII addresses are trimmed and lower-cased, which is their canonical form. Rows with other characters
 * are not folded into an ASCII address: a link mailed to `vic@ban\u212A.example` went to a different
 * mailbox than `vic@bank.example`, so such pending invitations are deleted (their links stop working),
 * and such users keep their address as it is, which no new invitation can match (new addresses must be
 * ASCII), so they are never merged with, or mistaken for, another user. A fold that would collide with an
 * existing address is not made either.
 */
export class CanonicalEmails1763791500000 implements MigrationInterface {
  name = 'CanonicalEmails1763791500000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX users_email_key');
    await q.query('DROP INDEX tenant_invitations_email');

    const users = (await q.query('SELECT id, email FROM users ORDER BY id')) as {
      id: string;
      email: string;
    }[];
    const taken = new Set(users.map((u) => u.email));
    for (const user of users) {
      const canonical = user.email.trim().toLowerCase();
      if (ASCII.test(user.email) && canonical !== user.email && !taken.has(canonical)) {
        await q.query('UPDATE users SET email = $1 WHERE id = $2', [canonical, user.id]);
        taken.delete(user.email);
        taken.add(canonical);
      }
    }

    const invitations = (await q.query(
      'SELECT tenant_id, id, email FROM tenant_invitations ORDER BY created_at DESC, id',
    )) as { tenant_id: string; id: string; email: string }[];
    const kept = new Set<string>();
    for (const invitation of invitations) {
      const canonical = invitation.email.trim().toLowerCase();
      const key = `${invitation.tenant_id} ${canonical}`;
      if (!ASCII.test(invitation.email) || kept.has(key)) {
        await q.query('DELETE FROM tenant_invitations WHERE tenant_id = $1 AND id = $2', [
          invitation.tenant_id,
          invitation.id,
        ]);
      } else {
        kept.add(key);
        if (canonical !== invitation.email) {
          await q.query('UPDATE tenant_invitations SET email = $1 WHERE tenant_id = $2 AND id = $3', [
            canonical,
            invitation.tenant_id,
            invitation.id,
          ]);
        }
      }
    }

    await q.query('CREATE UNIQUE INDEX users_email_key ON users (email)');
    await q.query('CREATE UNIQUE INDEX tenant_invitations_email ON tenant_invitations (tenant_id, email)');

    // One row per invitation e-mail of the last hour: the throttle's count (per address and per tenant).
    await q.query(`CREATE TABLE invitation_mails (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email text NOT NULL,
      sent_at timestamptz NOT NULL
    )`);
    await q.query('CREATE INDEX invitation_mails_by_tenant ON invitation_mails (tenant_id, sent_at)');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE invitation_mails');
    await q.query('DROP INDEX users_email_key');
    await q.query('DROP INDEX tenant_invitations_email');
    await q.query('CREATE UNIQUE INDEX users_email_key ON users (lower(email))');
    await q.query(
      'CREATE UNIQUE INDEX tenant_invitations_email ON tenant_invitations (tenant_id, lower(email))',
    );
  }
}
