import { Injectable } from '@nestjs/common';
import type { AccessRule } from '../access/access-rules';
import { Database } from '../database/database.service';

/** A stored session: never its key or nonce, only their hashes (which are not read back). */
export interface SessionRow {
  tenant_id: string;
  id: string;
  application_id: string;
  authorized_by: string | null;
  permissions: string[] | null;
  rules: AccessRule[] | null;
  expires_at: Date;
}

export interface NewSession {
  tenantId: string;
  id: string;
  keyHash: string;
  nonceHash: string;
  applicationId: string;
  createdAt: Date;
  expiresAt: Date;
}

export interface SessionGrant {
  authorizedBy: string;
  permissions: string[];
  rules: AccessRule[];
  expiresAt: Date | null;
}

const COLUMNS = 'tenant_id, id, application_id, authorized_by, permissions, rules, expires_at';

/** The sessions table: created, authorized once (by nonce, within the tenant), looked up by key hash, purged. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly db: Database) {}

  async insert(s: NewSession): Promise<void> {
    await this.db.execute(
      `INSERT INTO sessions (tenant_id, id, key_hash, nonce_hash, application_id, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [s.tenantId, s.id, s.keyHash, s.nonceHash, s.applicationId, s.createdAt, s.expiresAt],
    );
  }

  /** The live session of a key hash, of any tenant (the key names it); null when unknown or expired. */
  async findLiveByKeyHash(keyHash: string, now: Date): Promise<SessionRow | null> {
    const rows = await this.db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM sessions WHERE key_hash = $1 AND expires_at > $2`,
      [keyHash, now],
    );
    return rows[0] ?? null;
  }

  /** The tenant's session of a nonce, expired or not; null when the tenant has none. */
  async findByNonce(tenantId: string, nonceHash: string): Promise<SessionRow | null> {
    const rows = await this.db.query<SessionRow>(
      `SELECT ${COLUMNS} FROM sessions WHERE tenant_id = $1 AND nonce_hash = $2`,
      [tenantId, nonceHash],
    );
    return rows[0] ?? null;
  }

  /** Authorizes the session once: false when it was authorized meanwhile or has expired. */
  async authorize(tenantId: string, id: string, grant: SessionGrant, now: Date): Promise<boolean> {
    const changed = await this.db.execute(
      `UPDATE sessions SET authorized_by = $3, permissions = $4::jsonb, rules = $5::jsonb, authorized_at = $6,
         expires_at = coalesce($7, expires_at)
       WHERE tenant_id = $1 AND id = $2 AND authorized_by IS NULL AND expires_at > $6`,
      [
        tenantId,
        id,
        grant.authorizedBy,
        JSON.stringify(grant.permissions),
        JSON.stringify(grant.rules),
        now,
        grant.expiresAt,
      ],
    );
    return changed === 1;
  }

  /** Deletes the sessions expired by `now`; how many. */
  purgeExpired(now: Date): Promise<number> {
    return this.db.execute('DELETE FROM sessions WHERE expires_at <= $1', [now]);
  }
}
