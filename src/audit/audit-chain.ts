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
