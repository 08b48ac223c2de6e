import { Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal } from '../access/principal';
import { ungrantable } from '../access/grants';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { base58Fixed, hashSecret } from '../crypto';
import { Database } from '../database/database.service';
import { AuthorizeSessionDto, CreatedSessionDto } from './dto/session.dto';
import { checkSessionGrants } from './session-grants';
import { SESSION_KEY_PREFIX } from './session-principals.service';
import { SessionsRepository } from './sessions.repository';

/** How long a session lives unless its authorization says otherwise (as hosted). */
export const SESSION_LIFETIME_MS = 3 * 60_000;
/** The latest end an authorization may give a session, from the time it is authorized. */
export const MAX_SESSION_EXTENSION_MS = 60 * 60_000;

/**
 * Sessions: a page creates one with its public key and hands the nonce to its backend, which authorizes
 * it with a private key for what the page may then do with the session key (never more than the
 * backend's own permissions and rules), once, until the session expires.
 */
@Injectable()
export class SessionsService {
  constructor(
    private readonly db: Database,
    private readonly sessions: SessionsRepository,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal): Promise<CreatedSessionDto> {
    if (principal.applicationType !== 'public' || principal.session !== undefined) {
      throw ApiError.forbidden('Sessions are created with the key of a public application.');
    }
    const id = randomUUID();
    const sessionKey = SESSION_KEY_PREFIX + base58Fixed(randomBytes(32));
    const nonce = base58Fixed(randomBytes(16));
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + SESSION_LIFETIME_MS);
    await this.db.transaction(async () => {
      await this.sessions.insert({
        tenantId: principal.tenantId,
        id,
        keyHash: hashSecret(sessionKey),
        nonceHash: hashSecret(nonce),
        applicationId: principal.applicationId,
        createdAt: now,
        expiresAt,
      });
      await this.audit.record(
        auditEvent(
          principal,
          'application',
          principal.applicationId,
          'session.create',
          `Session ${id} created`,
        ),
      );
    });
    return { session_key: sessionKey, nonce, expires_at: expiresAt.toISOString() };
  }

  /**
   * 403 for a caller that is not a private application or asks for more than it holds; 404 for a nonce
   * the caller's tenant does not know or whose session expired; 409 for a session authorized already.
   */
  async authorize(principal: Principal, dto: AuthorizeSessionDto): Promise<void> {
    if (principal.applicationType !== 'private' || principal.session !== undefined) {
      throw ApiError.forbidden('Sessions are authorized with the key of a private application.');
    }
    const grants = checkSessionGrants(dto);
    const now = this.clock.now();
    const expiresAt = dto.expires_at === undefined ? null : new Date(dto.expires_at);
    if (
      expiresAt !== null &&
      (expiresAt <= now || expiresAt.getTime() > now.getTime() + MAX_SESSION_EXTENSION_MS)
    ) {
      throw ApiError.field('expires_at', 'must be in the future and at most 60 minutes from now');
    }
    const missing = ungrantable(principal, { type: 'private', ...grants });
    if (missing.length > 0) {
      throw ApiError.forbidden(
        `The application cannot authorize a session for what it does not hold itself: ${missing
          .slice(0, 10)
          .join('; ')}.`,
      );
    }
    const session = await this.sessions.findByNonce(principal.tenantId, hashSecret(dto.nonce));
    if (session === null || session.expires_at <= now) {
      throw ApiError.notFound('Session');
    }
    await this.db.transaction(async () => {
      const grant = { authorizedBy: principal.applicationId, ...grants, expiresAt };
      if (!(await this.sessions.authorize(principal.tenantId, session.id, grant, now))) {
        throw ApiError.conflict('The session is authorized already: a session is authorized once.');
      }
      await this.audit.record(
        auditEvent(
          principal,
          'application',
          session.application_id,
          'session.authorize',
          `Session ${session.id} authorized`,
        ),
      );
    });
  }

  /** Sessions past their expiry: deleted (their keys stop working at expiry already). */
  purgeExpired(now: Date): Promise<number> {
    return this.sessions.purgeExpired(now);
  }
}
