import type { KeyObject } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { linkHash } from './audit-chain';
import type { AuditRow } from './audit-event';
import {
  ChainHead,
  Link,
  linksPastHeads,
  lockHeads,
  SignedHead,
  signHead,
  StoredLink,
  updateHeads,
} from './audit-heads';

/** A record the sealer is about to chain, with the transaction that wrote it. */
export type Sealable = AuditRow & { xid: string };

/** What appending needs of the chain: its keys, whether a head is the one it signed, and the time. */
export interface ChainKeys {
  key(tenantId: string, keyId?: string): Promise<{ keyId: string; key: KeyObject } | null>;
  headHolds(head: ChainHead): Promise<boolean>;
  now(): Date;
}

/** Appends each tenant's records to its chain and moves (and signs) its head; how many links. */
export async function appendLinks(
  m: EntityManager,
  byTenant: Map<string, Sealable[]>,
  chain: ChainKeys,
): Promise<number> {
  const heads = await lockHeads(m, [...byTenant.keys()]);
  const past = await linksPastHeads(m, heads);
  const links: Link[] = [];
  const moved: SignedHead[] = [];
  for (const head of heads) {
    const { keyId, key } = (await chain.key(head.tenant_id)) as { keyId: string; key: KeyObject };
    const end = await continued(head, past, chain);
    let seq = BigInt(end.seq);
    let prev = end.hash;
    for (const row of byTenant.get(head.tenant_id) ?? []) {
      seq += 1n;
      const hash = linkHash(key, row, seq.toString(), prev);
      links.push({
        tenantId: row.tenant_id,
        seq: seq.toString(),
        recordXid: row.xid,
        recordId: row.id,
        prev,
        hash,
        keyId,
      });
      prev = hash;
    }
    moved.push(signHead(head.tenant_id, seq.toString(), prev, { keyId, key }, chain.now()));
  }
  await m.query(
    `INSERT INTO audit_links (tenant_id, seq, record_xid, record_id, prev_hash, hash, key_id)
     SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::xid8[], $4::uuid[], $5::text[], $6::text[], $7::text[])`,
    [
      links.map((l) => l.tenantId),
      links.map((l) => l.seq),
      links.map((l) => l.recordXid),
      links.map((l) => l.recordId),
      links.map((l) => l.prev),
      links.map((l) => l.hash),
      links.map((l) => l.keyId),
    ],
  );
  await updateHeads(m, moved);
  return links.length;
}

/** Every head that links already lie past (locked), moved over them: for a vault that just restarted. */
export async function catchUpHeads(m: EntityManager, chain: ChainKeys): Promise<void> {
  const heads: ChainHead[] = await m.query(
    `SELECT * FROM audit_chains c WHERE EXISTS (
       SELECT 1 FROM audit_links l WHERE l.tenant_id = c.tenant_id AND l.seq > c.head_seq)
     ORDER BY tenant_id FOR UPDATE`,
  );
  if (heads.length === 0) {
    return;
  }
  const past = await linksPastHeads(m, heads);
  const moved: SignedHead[] = [];
  for (const head of heads) {
    const end = await continued(head, past, chain);
    moved.push(signHead(head.tenant_id, end.seq, end.hash, (await chain.key(head.tenant_id))!, chain.now()));
  }
  await updateHeads(m, moved);
}

/**
 * Where the tenant's chain really ends: its head, or past it the links a sealer wrote without moving the
 * head. Never past a head this vault did not sign, nor over a link that does not continue the one before
 * under this vault's chain key: sealing then stops loudly until audit:verify is looked at.
 */
async function continued(
  head: ChainHead,
  past: StoredLink[],
  chain: ChainKeys,
): Promise<{ seq: string; hash: string | null }> {
  if (!(await chain.headHolds(head))) {
    throw new Error(
      `the audit chain head of tenant ${head.tenant_id} (link ${head.head_seq}) is not signed by this vault: ` +
        'it may have been cut or rewound; run audit:verify',
    );
  }
  let seq = BigInt(head.head_seq);
  let hash = head.head_hash;
  for (const link of past.filter((l) => l.link_tenant_id === head.tenant_id)) {
    const made = link.key_id === null ? null : await chain.key(head.tenant_id, link.key_id);
    const holds =
      link.seq === (seq + 1n).toString() &&
      link.prev_hash === hash &&
      link.id !== null &&
      made !== null &&
      linkHash(made.key, link, link.seq, hash) === link.hash;
    if (!holds) {
      throw new Error(
        `link ${link.seq} of tenant ${head.tenant_id} lies past its head (link ${seq}) but does not continue ` +
          'it; run audit:verify',
      );
    }
    seq += 1n;
    hash = link.hash;
  }
  return { seq: seq.toString(), hash };
}

/** Waits (at most `ms`) until every transaction that had begun writing when it was called has ended. */
export async function awaitEarlierWriters(dataSource: DataSource, ms: number): Promise<void> {
  const [{ next }]: { next: string }[] = await dataSource.query(
    'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next',
  );
  const deadline = Date.now() + ms;
  for (;;) {
    const [{ ended }]: { ended: boolean }[] = await dataSource.query(
      'SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS ended',
      [next],
    );
    if (ended || Date.now() >= deadline) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
