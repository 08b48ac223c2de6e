import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { InvitationsService } from '../tenants/invitations/invitations.service';
import { JobRunner } from './job-runner';

/** The scheduled expiry of invitations: PENDING ones past expires_at become EXPIRED (spec §3). */
@Injectable()
export class InvitationExpiryService {
  private readonly logger = new Logger('InvitationExpiry');

  constructor(
    private readonly invitations: InvitationsService,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
  ) {}

  /** How many it expired here (0 when another replica held the job). */
  async run(): Promise<number> {
    let expired = 0;
    await this.jobs.runExclusive('invitation-expiry', async () => {
      expired = await this.invitations.expireDue(this.clock.now());
      if (expired > 0) {
        this.logger.log({ expired }, 'invitations expired');
      }
    });
    return expired;
  }
}
