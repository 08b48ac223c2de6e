import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox of invitation e-mails: one row per invitation, written in the transaction that creates or
 * resends it, and delivered afterwards with retries, so a mail server that is down loses no invitation and
 * a restart loses no e-mail. The link's secret is kept sealed under the tenant's data key until the e-mail
 * is sent (tenant_invitations holds only its hash), then erased.
 */
export class InvitationOutbox1763801000000 implements MigrationInterface {
  name = 'InvitationOutbox1763801000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE invitation_outbox (
      id uuid PRIMARY KEY,
      tenant_id uuid NOT NULL,
      invitation_id uuid NOT NULL,
      kind text NOT NULL CHECK (kind IN ('create', 'resend')),
      status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
      secret bytea,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      last_attempt_at timestamptz,
      next_attempt_at timestamptz NOT NULL,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      FOREIGN KEY (tenant_id, invitation_id) REFERENCES tenant_invitations (tenant_id, id) ON DELETE CASCADE,
      CHECK (status = 'pending' OR secret IS NULL)
    )`);
    // The e-mail of the invitation's current link: a resend replaces the row.
    await q.query(
      'CREATE UNIQUE INDEX invitation_outbox_invitation ON invitation_outbox (tenant_id, invitation_id)',
    );
    await q.query(
      `CREATE INDEX invitation_outbox_due ON invitation_outbox (next_attempt_at) WHERE status = 'pending'`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE invitation_outbox');
  }
}
