import { createHmac, createSecretKey, hkdfSync, KeyObject } from 'node:crypto';
import type { AuditRow } from './audit-event';

/** The id records keep of the key their link was made with (one derivation so far). */
export const CHAIN_KEY_ID = 'tenant-hmac-v1';

/** The chain key: HKDF-SHA256 of the tenant's HMAC key, for this purpose only. */
export function chainKey(tenantHmacKey: KeyObject): KeyObject {
  return createSecretKey(
    Buffer.from(hkdfSync('sha256', tenantHmacKey, Buffer.alloc(0), 'audit-chain-v1', 32)),
  );
}

/** Every column a record's hash covers, in a fixed order; the hash itself and key_id excepted. */
function canonical(row: AuditRow, seq: string, prevHash: string | null): string {
  const columns = [
    row.tenant_id,
    seq,
    prevHash,
    row.id,
    new Date(row.created_at).toISOString(),
    row.actor_id,
    row.actor_type,
    row.entity_type,
    row.entity_id,
    row.operation,
    row.outcome,
    row.message,
    row.request_id,
    row.remote_address,
    row.user_agent,
  ];
  // Records made before token_ids existed (and records of one entity) hash as they always did.
  return JSON.stringify((row.token_ids ?? null) === null ? columns : [...columns, row.token_ids]);
}

/** HMAC-SHA256 (hex) of a record and the hash of the record before it: a link of the tenant's chain. */
export function linkHash(key: KeyObject, row: AuditRow, seq: string, prevHash: string | null): string {
  return createHmac('sha256', key)
    .update(`record\0${canonical(row, seq, prevHash)}`)
    .digest('hex');
}

/** The signature of the anchor retention leaves: the last deleted link, so what remains still verifies. */
export function anchorSignature(key: KeyObject, tenantId: string, seq: string, hash: string | null): string {
  return createHmac('sha256', key)
    .update(`anchor\0${JSON.stringify([tenantId, seq, hash])}`)
    .digest('hex');
}

/** A signed chain head: where the tenant's chain stood, kept outside the database to detect a later cut. */
export interface Checkpoint {
  tenant_id: string;
  seq: string;
  hash: string | null;
  signed_at: string;
  key_id: string;
  signature: string;
}

/** The signature of a chain head (what the sealer last appended), so the head cannot be rewound unnoticed. */
export function headSignature(
  key: KeyObject,
  head: Pick<Checkpoint, 'tenant_id' | 'seq' | 'hash' | 'signed_at'>,
): string {
  return createHmac('sha256', key)
    .update(`head\0${JSON.stringify([head.tenant_id, head.seq, head.hash, head.signed_at])}`)
    .digest('hex');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The checkpoint of one parsed JSON value (a line `{"checkpoint": {...}}` of audit:export, or the bare object). */
function asCheckpoint(value: unknown): Checkpoint | null {
  const v = (value as { checkpoint?: unknown } | null)?.checkpoint ?? value;
  if (typeof v !== 'object' || v === null) {
    return null;
  }
  const c = v as Record<string, unknown>;
  const text = (k: string): boolean => typeof c[k] === 'string';
  if (!(text('tenant_id') && text('seq') && text('signed_at') && text('key_id') && text('signature'))) {
    return null;
  }
  if (!UUID.test(c.tenant_id as string) || !/^\d{1,19}$/.test(c.seq as string)) {
    return null;
  }
  if (!(c.hash === null || typeof c.hash === 'string')) {
    return null;
  }
  return {
    tenant_id: c.tenant_id as string,
    seq: c.seq as string,
    hash: c.hash,
    signed_at: c.signed_at as string,
    key_id: c.key_id as string,
    signature: c.signature as string,
  };
}

/**
 * The checkpoints in a text: JSON Lines (a whole audit:export output: its record lines are skipped) or one
 * JSON object. Throws a one-line RangeError when a line is not JSON or the text holds no checkpoint.
 */
export function parseCheckpoints(text: string): Checkpoint[] {
  const found: Checkpoint[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') {
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new RangeError(`line ${i + 1} is not JSON`);
    }
    const checkpoint = asCheckpoint(value);
    if (checkpoint !== null) {
      found.push(checkpoint);
    } else if ((value as { checkpoint?: unknown } | null)?.checkpoint !== undefined) {
      throw new RangeError(`line ${i + 1} is not a well-formed checkpoint`);
    }
  });
  if (found.length === 0) {
    throw new RangeError('it holds no checkpoint (a line {"checkpoint": {...}} of audit:export)');
  }
  return found;
}

/** Where sealing is: the record it chains next (or, before it has read any, the cursor it starts after). */
export interface SealProgress {
  at: { tenantId: string | null; recordId: string; xid: string } | null;
}

/**
 * Sealing failed: the SQLSTATE when the database refused (`code`) and the record it stopped at, which the
 * job logs instead of the message (a database message may quote values).
 */
export class SealError extends Error {
  readonly code: string | null;
  readonly type: string;

  constructor(
    override readonly cause: unknown,
    readonly stoppedAt: SealProgress['at'],
  ) {
    const code = (cause as { code?: unknown } | null)?.code;
    const at =
      stoppedAt === null
        ? ''
        : ` at record ${stoppedAt.recordId} (transaction ${stoppedAt.xid}` +
          `${stoppedAt.tenantId === null ? '' : `, tenant ${stoppedAt.tenantId}`})`;
    const sqlState = typeof code === 'string' ? ` [SQLSTATE ${code}]` : '';
    super(`sealing stopped${at}${sqlState}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'SealError';
    this.code = typeof code === 'string' ? code : null;
    this.type = cause instanceof Error ? cause.name : 'unknown';
  }
}
