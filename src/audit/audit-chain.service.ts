import { Injectable } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { Clock } from '../common/clock';
import { TenantKeysService } from '../crypto/tenant-keys.service';
import { Database } from '../database/database.service';
import {
  anchorSignature,
  chainKey,
  CHAIN_KEY_ID,
  headSignature,
  linkHash,
  SealError,
  SealProgress,
} from './audit-chain';
import { Breach, ChainHead, SignedHead, signHead } from './audit-heads';
import { appendLinks, awaitEarlierWriters, catchUpHeads, ChainKeys, Sealable } from './audit-append';
import { AuditChainsRepository } from './audit-chains.repository';
import { AuditRecordsRepository } from './audit-records.repository';

const SEAL_BATCH = 500;
const VERIFY_BATCH = 1000;
/** How long `sealAll({ wait: true })` waits for transactions still writing when it was called. */
const WAIT_MS = 10_000;
/** How long a shutdown waits for a running seal's batch. */
const SHUTDOWN_WAIT_MS = 5_000;

/**
 * The per-tenant hash chain of audit records. Records are inserted unchained (one cheap INSERT on the hot
 * path, never updated); `sealAll()` then appends each tenant's new records to its chain in `audit_links`:
 * the next sequence numbers and HMAC links, under the lock of the sealer's cursor and of the tenant's
 * `audit_chains` row, so replicas sealing at once queue up instead of forking (the (tenant_id, seq) key
 * would refuse a fork anyway). The HMAC key is derived from the tenant's HMAC key, which only a master key
 * unwraps: database access alone cannot recompute a link, nor sign a head it rewound to an earlier link.
 */
@Injectable()
export class AuditChain {
  /** Whether this process has moved every head over links already past it (once, at its first seal). */
  private caughtUp = false;
  /** Seals running now, and whether the application is shutting down (no new batch then). */
  private running = 0;
  private stopping = false;
  /** What appending links needs of this chain. */
  private readonly appending: ChainKeys = {
    key: (tenantId, keyId) => this.key(tenantId, keyId),
    headHolds: (head) => this.headHolds(head),
    now: () => this.clock.now(),
  };

  constructor(
    private readonly db: Database,
    private readonly records: AuditRecordsRepository,
    private readonly chains: AuditChainsRepository,
    private readonly keys: TenantKeysService,
    private readonly clock: Clock,
  ) {}

  /**
   * The tenant's chain key, by id (the current one without): HKDF of the tenant's HMAC key, which only a
   * master key (in the environment or in the HSM) unwraps, so database access alone cannot recompute a link.
   * Null for an id this vault does not know.
   */
  async key(
    tenantId: string,
    keyId: string = CHAIN_KEY_ID,
  ): Promise<{ keyId: string; key: KeyObject } | null> {
    if (keyId !== CHAIN_KEY_ID) {
      return null;
    }
    return { keyId, key: chainKey(await this.keys.hmacKey(tenantId)) };
  }

  /**
   * Chains every record whose transaction has ended; how many. First it waits (at most WAIT_MS) until every
   * transaction that had written when it was called has ended, so that everything committed before the call
   * is chained; the scheduled job, which comes back anyway, passes `wait: false`. A failure is a SealError
   * naming the SQLSTATE and the record sealing stopped at.
   */
  async sealAll({ wait = true }: { wait?: boolean } = {}): Promise<number> {
    this.running++;
    try {
      if (wait) {
        await awaitEarlierWriters(this.records, WAIT_MS);
      }
      let total = 0;
      // While shutting down, no new batch: the one running commits before the database closes.
      while (!this.stopping) {
        const progress: SealProgress = { at: null };
        let batch: { scanned: number; chained: number };
        try {
          batch = await this.db.transaction(() => this.sealBatch(progress, !this.caughtUp));
        } catch (err) {
          throw new SealError(err, progress.at);
        }
        this.caughtUp = true;
        total += batch.chained;
        if (batch.scanned < SEAL_BATCH) {
          break;
        }
      }
      return total;
    } finally {
      this.running--;
    }
  }

  /** On shutdown, before the database closes: lets a running seal finish its batch instead of cutting it off. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const until = Date.now() + SHUTDOWN_WAIT_MS; this.running > 0 && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * The next records after the cursor, in (xid, id) order, of transactions older than any still running:
   * none can commit behind the cursor later. Each tenant's get the next links of its chain, under the lock
   * of the cursor (one sealer at a time) and of the tenant's head (which retention also moves). Idempotent:
   * a record that has a link already is passed over, and links already past a head are taken into it first,
   * whatever an interrupted or earlier sealer left (`catchUp`: every tenant's head, once per process).
   */
  private async sealBatch(
    progress: SealProgress,
    catchUp: boolean,
  ): Promise<{ scanned: number; chained: number }> {
    const cursor = await this.records.lockSealCursor();
    progress.at = { tenantId: null, recordId: cursor.id, xid: cursor.xid };
    if (cursor.unsigned_heads) {
      await this.signUnsignedHeads();
    }
    if (catchUp) {
      await catchUpHeads(this.chains, this.appending);
    }
    const rows = await this.records.recordsToSeal(cursor, SEAL_BATCH);
    const byTenant = new Map<string, Sealable[]>();
    for (const row of rows.filter((r) => !r.linked)) {
      const own = byTenant.get(row.tenant_id);
      if (own === undefined) {
        byTenant.set(row.tenant_id, [row]);
      } else {
        own.push(row);
      }
    }
    const first = rows.find((r) => !r.linked);
    if (first !== undefined) {
      progress.at = { tenantId: first.tenant_id, recordId: first.id, xid: first.xid };
    }
    const links = byTenant.size === 0 ? 0 : await appendLinks(this.chains, byTenant, this.appending);
    if (rows.length > 0) {
      const last = rows[rows.length - 1];
      await this.records.moveSealCursor(last.xid, last.id);
    }
    return { scanned: rows.length, chained: links };
  }

  /**
   * Once after the upgrade that added head signatures: signs the heads chained before it (trusted as they
   * are then), so that from now on an unsigned head past link 0 is a breach.
   */
  private async signUnsignedHeads(): Promise<void> {
    const heads = await this.chains.lockUnsignedHeads();
    const signed: SignedHead[] = [];
    for (const head of heads) {
      const { keyId, key } = (await this.key(head.tenant_id)) as { keyId: string; key: KeyObject };
      signed.push(signHead(head.tenant_id, head.head_seq, head.head_hash, { keyId, key }, this.clock.now()));
    }
    await this.chains.updateHeads(signed);
    await this.records.markHeadsSigned();
  }

  /** Whether the head is the one this vault signed (an unsigned head only at link 0: nothing chained yet). */
  async headHolds(head: ChainHead): Promise<boolean> {
    if (head.head_signature === null || head.head_signed_at === null) {
      return head.head_seq === '0' && head.head_hash === null;
    }
    const chain = head.head_key_id === null ? null : await this.key(head.tenant_id, head.head_key_id);
    const signed = { tenant_id: head.tenant_id, seq: head.head_seq, hash: head.head_hash };
    return (
      chain !== null &&
      headSignature(chain.key, { ...signed, signed_at: head.head_signed_at }) === head.head_signature
    );
  }

  /** The tenant's chain row, or null. */
  head(tenantId: string): Promise<ChainHead | null> {
    return this.chains.head(tenantId);
  }

  /** Tenants that have a chain, for verifying them all. */
  tenants(): Promise<string[]> {
    return this.chains.tenants();
  }

  /** Tenants that have a chain, audit records or links (a tenant whose chain row was deleted has no chain). */
  verifiable(): Promise<string[]> {
    return this.chains.verifiable();
  }

  /**
   * Checks the tenant's signed head, then walks its chain from the anchor to the head; the first breach, or
   * null. Records the sealer has passed without a link of theirs are a breach too (their links were deleted).
   */
  async verify(tenantId: string): Promise<Breach | null> {
    const breach = (seq: string | null, recordId: string | null, reason: string): Breach => ({
      tenantId,
      seq,
      recordId,
      reason,
    });
    const head = await this.head(tenantId);
    if (head === null) {
      const chained = await this.chains.countChained(tenantId, { unlinkedOnly: false });
      return chained === 0
        ? null
        : breach(
            null,
            null,
            `the chain is missing: ${chained} chained record(s) or link(s) but no chain row`,
          );
    }
    if (!(await this.chains.tenantExists(tenantId))) {
      const reason = 'the tenant was purged, and its chain key with it: its chain can no longer be verified';
      return { ...breach(head.head_seq, null, reason), purged: true };
    }
    let holds: boolean;
    try {
      holds = await this.headHolds(head);
    } catch (err) {
      return breach(head.head_seq, null, `its chain key cannot be loaded (${(err as Error).message})`);
    }
    if (!holds) {
      const why = head.head_signature === null ? 'is not signed' : 'is not signed by this vault';
      return breach(head.head_seq, null, `its head ${why}: the chain was cut, rewound or replaced`);
    }
    if (head.anchor_seq !== '0' && !(await this.anchorHolds(tenantId, head))) {
      return breach(head.anchor_seq, null, 'the retention anchor is not signed by this vault');
    }
    let expected = BigInt(head.anchor_seq) + 1n;
    let prev = head.anchor_hash;
    for (;;) {
      // Up to the head read above: a replica sealing meanwhile appends past it.
      const rows = await this.chains.links(tenantId, expected.toString(), head.head_seq, VERIFY_BATCH);
      for (const row of rows) {
        if (row.seq !== expected.toString()) {
          return breach(expected.toString(), null, `link ${expected} is missing`);
        }
        if (row.id === null) {
          return breach(row.seq, row.record_id, 'its record is missing');
        }
        if (row.prev_hash !== prev) {
          return breach(row.seq, row.id, 'its previous-record hash does not match the record before it');
        }
        const chain = row.key_id === null ? null : await this.key(tenantId, row.key_id);
        if (chain === null) {
          return breach(row.seq, row.id, 'it names no chain key of this vault');
        }
        if (linkHash(chain.key, row, row.seq, prev) !== row.hash) {
          return breach(row.seq, row.id, 'its content does not match its hash (edited)');
        }
        prev = row.hash;
        expected += 1n;
      }
      if (rows.length < VERIFY_BATCH) {
        break;
      }
    }
    const last = (expected - 1n).toString();
    if (last !== head.head_seq || prev !== head.head_hash) {
      return breach(head.head_seq, null, `the chain ends at ${last}, its head says ${head.head_seq}`);
    }
    const unlinked = await this.chains.countChained(tenantId, { unlinkedOnly: true });
    if (unlinked > 0) {
      return breach(null, null, `${unlinked} record(s) the sealer has passed are in no link of the chain`);
    }
    return null;
  }

  private async anchorHolds(tenantId: string, head: ChainHead): Promise<boolean> {
    const chain = head.anchor_key_id === null ? null : await this.key(tenantId, head.anchor_key_id);
    if (chain === null) {
      return false;
    }
    return anchorSignature(chain.key, tenantId, head.anchor_seq, head.anchor_hash) === head.anchor_signature;
  }
}
