import type { KeyObject } from 'node:crypto';
import { headSignature } from './audit-chain';
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

/** A link of the chain with its record's columns (null when the record is gone). */
export type StoredLink = LinkedRow & { link_tenant_id: string; record_id: string; seq: string; hash: string };
