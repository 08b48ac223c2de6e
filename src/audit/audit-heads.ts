import type { KeyObject } from 'node:crypto';
import { EntityManager } from 'typeorm';
import { headSignature } from './audit-chain';
import { recordColumns } from './audit-event';
import type { LinkedRow } from './audit-event';

/** A tenant's `audit_chains` row: where its chain ends (the signed head) and starts (the signed anchor). */
export interface ChainHead {
  tenant_id: string;
  head_seq: string;
  head_hash: string | null;
  anchor_seq: string;
  anchor_hash: string | null;
  anchor_key_id: string | null;
  anchor_signature: string | null;
  /** The head's signature (HMAC with the chain key) and what it covers besides seq and hash. */
  head_signed_at: string | null;
  head_key_id: string | null;
  head_signature: string | null;
}

export type SignedHead = Pick<
  ChainHead,
  'tenant_id' | 'head_seq' | 'head_hash' | 'head_signed_at' | 'head_key_id' | 'head_signature'
>;

/** A link the sealer appends to `audit_links`. */
export interface Link {
  tenantId: string;
  seq: string;
  recordXid: string;
  recordId: string;
  prev: string | null;
  hash: string;
  keyId: string;
}

/** The first broken link of a tenant's chain, or null when every link holds. */
export interface Breach {
  tenantId: string;
  seq: string | null;
  recordId: string | null;
  reason: string;
  /** The tenant was purged, its keys with it: its chain can no longer be checked, which is not a breach. */
  purged?: true;
}

/** The head that says the chain now ends at `seq` with `hash`, signed at `now` with the tenant's chain key. */
export function signHead(
  tenantId: string,
  seq: string,
  hash: string | null,
  chain: { keyId: string; key: KeyObject },
  now: Date,
): SignedHead {
  const signedAt = now.toISOString();
  return {
    tenant_id: tenantId,
    head_seq: seq,
    head_hash: hash,
    head_signed_at: signedAt,
    head_key_id: chain.keyId,
    head_signature: headSignature(chain.key, { tenant_id: tenantId, seq, hash, signed_at: signedAt }),
  };
}

/** Moves the heads (seq, hash and their signature). */
export async function updateHeads(m: EntityManager, heads: SignedHead[]): Promise<void> {
  await m.query(
    `UPDATE audit_chains c SET head_seq = u.seq, head_hash = u.hash, head_signed_at = u.signed_at,
       head_key_id = u.key_id, head_signature = u.signature
     FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])
       AS u(tenant_id, seq, hash, signed_at, key_id, signature)
     WHERE c.tenant_id = u.tenant_id`,
    [
      heads.map((h) => h.tenant_id),
      heads.map((h) => h.head_seq),
      heads.map((h) => h.head_hash),
      heads.map((h) => h.head_signed_at),
      heads.map((h) => h.head_key_id),
      heads.map((h) => h.head_signature),
    ],
  );
}

/** The tenants' chain rows, created when missing, locked (in tenant order) until the transaction ends. */
export async function lockHeads(m: EntityManager, tenantIds: string[]): Promise<ChainHead[]> {
  await m.query(
    'INSERT INTO audit_chains (tenant_id) SELECT unnest($1::uuid[]) ORDER BY 1 ON CONFLICT (tenant_id) DO NOTHING',
    [tenantIds],
  );
  return m.query(
    'SELECT * FROM audit_chains WHERE tenant_id = ANY($1::uuid[]) ORDER BY tenant_id FOR UPDATE',
    [tenantIds],
  );
}

/** A link of the chain with its record's columns (null when the record is gone). */
export type StoredLink = LinkedRow & { link_tenant_id: string; record_id: string; seq: string; hash: string };

/**
 * The links past the heads (tenant ids and head seqs), in (tenant, seq) order, with their records: what a
 * sealer that wrote its links but not its head would leave. Normally none: one probe of the key per tenant.
 */
export async function linksPastHeads(
  m: EntityManager,
  heads: Pick<ChainHead, 'tenant_id' | 'head_seq'>[],
): Promise<StoredLink[]> {
  return m.query(
    `SELECT l.tenant_id AS link_tenant_id, l.seq::text AS seq, l.prev_hash, l.hash, l.key_id, l.record_id,
       ${recordColumns('r')}
     FROM unnest($1::uuid[], $2::bigint[]) AS h(tenant_id, seq)
     JOIN audit_links l ON l.tenant_id = h.tenant_id AND l.seq > h.seq
     LEFT JOIN audit_records r ON r.xid = l.record_xid AND r.id = l.record_id AND r.tenant_id = l.tenant_id
     ORDER BY l.tenant_id, l.seq`,
    [heads.map((h) => h.tenant_id), heads.map((h) => h.head_seq)],
  );
}

/** The tenant's chain row, created when missing, locked until the transaction ends. */
export async function lockHead(m: EntityManager, tenantId: string): Promise<ChainHead> {
  return (await lockHeads(m, [tenantId]))[0];
}

/** Whether the tenant still exists (a purged tenant's keys went with it; its audit trail stays). */
export async function tenantExists(m: EntityManager, tenantId: string): Promise<boolean> {
  const rows: unknown[] = await m.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId]);
  return rows.length > 0;
}

/**
 * The tenant's records behind the sealer's cursor (so they were chained): those no link names, or all of
 * them and its links, whichever is more (what a missing chain row leaves behind).
 */
export async function countChained(
  m: EntityManager,
  tenantId: string,
  { unlinkedOnly }: { unlinkedOnly: boolean },
): Promise<number> {
  const [{ n }]: { n: number }[] = await m.query(
    `SELECT GREATEST(
       (SELECT count(*)::int FROM audit_records r, audit_seal_state s
        WHERE r.tenant_id = $1 AND (r.xid, r.id) <= (s.cursor_xid, s.cursor_id) AND NOT ($2 AND EXISTS (
          SELECT 1 FROM audit_links l WHERE l.tenant_id = r.tenant_id AND l.record_id = r.id))),
       CASE WHEN $2 THEN 0 ELSE (SELECT count(*)::int FROM audit_links WHERE tenant_id = $1) END
     ) AS n`,
    [tenantId, unlinkedOnly],
  );
  return n;
}
