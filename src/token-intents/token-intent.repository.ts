import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';

/** A stored token intent: its data sealed, its card details in the clear. */
export interface TokenIntentRow {
  tenantId: string;
  id: string;
  type: string;
  data: Buffer;
  fingerprint: string;
  details: Record<string, unknown> | null;
  createdBy: string | null;
  createdAt: Date;
  expiresAt: Date;
}

const COLUMNS = `tenant_id AS "tenantId", id, type, data, fingerprint, details, created_by AS "createdBy",
  created_at AS "createdAt", expires_at AS "expiresAt"`;

/** Token intents, each of one tenant; an expired intent is found by no method but the purge. */
@Injectable()
export class TokenIntentRepository {
  constructor(private readonly db: Database) {}

  async insert(row: TokenIntentRow): Promise<void> {
    await this.db.execute(
      `INSERT INTO token_intents (tenant_id, id, type, data, fingerprint, details, created_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        row.tenantId,
        row.id,
        row.type,
        row.data,
        row.fingerprint,
        row.details === null ? null : JSON.stringify(row.details),
        row.createdBy,
        row.createdAt,
        row.expiresAt,
      ],
    );
  }

  async find(tenantId: string, id: string, now: Date): Promise<TokenIntentRow | null> {
    const rows = await this.db.query<TokenIntentRow>(
      `SELECT ${COLUMNS} FROM token_intents WHERE tenant_id = $1 AND id = $2 AND expires_at > $3`,
      [tenantId, id, now],
    );
    return rows[0] ?? null;
  }

  /** False when the tenant has no such live intent (unknown, expired, or deleted or converted already). */
  async delete(tenantId: string, id: string, now: Date): Promise<boolean> {
    const deleted = await this.db.execute(
      'DELETE FROM token_intents WHERE tenant_id = $1 AND id = $2 AND expires_at > $3',
      [tenantId, id, now],
    );
    return deleted > 0;
  }

  /** Intents past their expiry, deleted; how many. */
  purgeExpired(now: Date): Promise<number> {
    return this.db.execute('DELETE FROM token_intents WHERE expires_at <= $1', [now]);
  }
}
