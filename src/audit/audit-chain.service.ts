import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { KeyObject } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { TenantKeysService } from '../crypto/tenant-keys.service';
import { anchorSignature, chainKey, CHAIN_KEY_ID, linkHash } from './audit-chain';
import type { AuditRow } from './audit-event';

const SEAL_BATCH = 500;
const VERIFY_BATCH = 1000;

export interface ChainHead {
  head_seq: string;
  head_hash: string | null;
  anchor_seq: string;
  anchor_hash: string | null;
  anchor_key_id: string | null;
  anchor_signature: string | null;
}

/** The first broken link of a tenant's chain, or null when every link holds. */
export interface Breach {
  tenantId: string;
  seq: string | null;
  recordId: string | null;
  reason: string;
}

/**
 * The per-tenant hash chain of audit records. Records are inserted unchained (one cheap INSERT on the hot
 * path); `seal()` then gives each tenant's new records the next sequence numbers and HMAC links, under a
 * row lock on the tenant's `audit_chains` row, so replicas sealing at once queue up instead of forking
 * (the unique (tenant_id, seq) index would refuse a fork anyway). The HMAC key is derived from the
 * tenant's HMAC key, which only a master key unwraps: database access alone cannot recompute a link.
 */
@Injectable()
export class AuditChain {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: TenantKeysService,
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

  /** Chains every unchained record of every tenant; how many it chained. */
  async sealAll(): Promise<number> {
    const tenants: { tenant_id: string }[] = await this.dataSource.query(
      'SELECT DISTINCT tenant_id FROM audit_records WHERE seq IS NULL',
    );
    let sealed = 0;
    for (const { tenant_id } of tenants) {
      sealed += await this.sealTenant(tenant_id);
    }
    return sealed;
  }

  async sealTenant(tenantId: string): Promise<number> {
    let total = 0;
    for (;;) {
      const sealed = await this.dataSource.transaction((m) => this.sealBatch(m, tenantId));
      total += sealed;
      if (sealed < SEAL_BATCH) {
        return total;
      }
    }
  }

  private async sealBatch(m: EntityManager, tenantId: string): Promise<number> {
    const head = await lockHead(m, tenantId);
    const rows: AuditRow[] = await m.query(
      `SELECT * FROM audit_records WHERE tenant_id = $1 AND seq IS NULL ORDER BY created_at, id LIMIT ${SEAL_BATCH}`,
      [tenantId],
    );
    if (rows.length === 0) {
      return 0;
    }
    const { keyId, key } = (await this.key(tenantId)) as { keyId: string; key: KeyObject };
    let seq = BigInt(head.head_seq);
    let prev = head.head_hash;
    const ids: string[] = [];
    const seqs: string[] = [];
    const prevs: (string | null)[] = [];
    const hashes: string[] = [];
    for (const row of rows) {
      seq += 1n;
      const hash = linkHash(key, row, seq.toString(), prev);
      ids.push(row.id);
      seqs.push(seq.toString());
      prevs.push(prev);
      hashes.push(hash);
      prev = hash;
    }
    await m.query(
      `UPDATE audit_records r SET seq = u.seq, prev_hash = u.prev_hash, hash = u.hash, key_id = $2
       FROM unnest($3::uuid[], $4::bigint[], $5::text[], $6::text[]) AS u(id, seq, prev_hash, hash)
       WHERE r.tenant_id = $1 AND r.id = u.id`,
      [tenantId, keyId, ids, seqs, prevs, hashes],
    );
    await m.query('UPDATE audit_chains SET head_seq = $2, head_hash = $3 WHERE tenant_id = $1', [
      tenantId,
      seq.toString(),
      prev,
    ]);
    return rows.length;
  }

  /** Tenants that have a chain, for verifying them all. */
  async tenants(): Promise<string[]> {
    const rows: { tenant_id: string }[] = await this.dataSource.query(
      'SELECT tenant_id FROM audit_chains ORDER BY tenant_id',
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Walks the tenant's chain from its anchor to its head; the first broken link, or null. */
  async verify(tenantId: string): Promise<Breach | null> {
    const heads: ChainHead[] = await this.dataSource.query(
      'SELECT * FROM audit_chains WHERE tenant_id = $1',
      [tenantId],
    );
    if (heads.length === 0) {
      return null;
    }
    const head = heads[0];
    const breach = (seq: string | null, recordId: string | null, reason: string): Breach => ({
      tenantId,
      seq,
      recordId,
      reason,
    });
    if (head.anchor_seq !== '0' && !(await this.anchorHolds(tenantId, head))) {
      return breach(head.anchor_seq, null, 'the retention anchor is not signed by this vault');
    }
    let expected = BigInt(head.anchor_seq) + 1n;
    let prev = head.anchor_hash;
    for (;;) {
      const rows: AuditRow[] = await this.dataSource.query(
        `SELECT * FROM audit_records WHERE tenant_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${VERIFY_BATCH}`,
        [tenantId, expected.toString()],
      );
      for (const row of rows) {
        if (row.seq !== expected.toString()) {
          return breach(expected.toString(), null, `record ${expected} is missing`);
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

/** The tenant's chain row, created when missing, locked until the transaction ends. */
export async function lockHead(m: EntityManager, tenantId: string): Promise<ChainHead> {
  await m.query('INSERT INTO audit_chains (tenant_id) VALUES ($1) ON CONFLICT (tenant_id) DO NOTHING', [
    tenantId,
  ]);
  const rows: ChainHead[] = await m.query('SELECT * FROM audit_chains WHERE tenant_id = $1 FOR UPDATE', [
    tenantId,
  ]);
  return rows[0];
}
