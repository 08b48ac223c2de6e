import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An invitation e-mail can be `logged`: written to the log because no SMTP_URL is set, which `sent` used
 * to claim. Rows already marked sent stay so (whether a mail server took them is not recorded).
 */
export class InvitationMailLogged1764850000000 implements MigrationInterface {
  name = 'InvitationMailLogged1764850000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invitation_outbox
      DROP CONSTRAINT invitation_outbox_status_check,
      ADD CONSTRAINT invitation_outbox_status_check CHECK (status IN ('pending', 'sent', 'logged', 'failed'))`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE invitation_outbox SET status = 'sent' WHERE status = 'logged'`);
    await q.query(`ALTER TABLE invitation_outbox
      DROP CONSTRAINT invitation_outbox_status_check,
      ADD CONSTRAINT invitation_outbox_status_check CHECK (status IN ('pending', 'sent', 'failed'))`);
  }
}
