import type { KeyObject } from 'node:crypto';
import { linkHash } from './audit-chain';
import type { AuditChainsRepository } from './audit-chains.repository';
import type { AuditRow } from './audit-event';
import { ChainHead, Link, SignedHead, signHead, StoredLink } from './audit-heads';
import type { AuditRecordsRepository } from './audit-records.repository';

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
  chains: AuditChainsRepository,
  byTenant: Map<string, Sealable[]>,
  chain: ChainKeys,
): Promise<number> {
  const heads = await chains.lockHeads([...byTenant.keys()]);
  const past = await chains.linksPastHeads(heads);
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
  await chains.insertLinks(links);
  await chains.updateHeads(moved);
  return links.length;
}

/** Every head that links already lie past (locked), moved over them: for a vault that just restarted. */
export async function catchUpHeads(chains: AuditChainsRepository, chain: ChainKeys): Promise<void> {
  const heads = await chains.lockHeadsBehindLinks();
  if (heads.length === 0) {
    return;
  }
  const past = await chains.linksPastHeads(heads);
  const moved: SignedHead[] = [];
  for (const head of heads) {
    const end = await continued(head, past, chain);
    moved.push(signHead(head.tenant_id, end.seq, end.hash, (await chain.key(head.tenant_id))!, chain.now()));
  }
  await chains.updateHeads(moved);
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
export async function awaitEarlierWriters(records: AuditRecordsRepository, ms: number): Promise<void> {
  const next = await records.nextTransactionId();
  const deadline = Date.now() + ms;
  for (;;) {
    const ended = await records.endedBefore(next);
    if (ended || Date.now() >= deadline) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
