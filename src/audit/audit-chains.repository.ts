import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';
import { readRecordColumns, recordColumns } from './audit-event';
import type { LinkedRow } from './audit-event';
import type { ChainHead, Link, SignedHead, StoredLink } from './audit-heads';

/**
 * The tenants' hash chains: their `audit_chains` rows (the signed head and the retention anchor) and their
 * links in `audit_links`. The locks taken here (FOR UPDATE, in tenant order) are what keeps replicas sealing
 * or deleting at once from forking a chain.
 */
@Injectable()
export class AuditChainsRepository {
  constructor(private readonly db: Database) {}

  /** The tenants' chain rows, created when missing, locked (in tenant order) until the transaction ends. */
  async lockHeads(tenantIds: string[]): Promise<ChainHead[]> {
    await this.db.query(
      'INSERT INTO audit_chains (tenant_id) SELECT unnest($1::uuid[]) ORDER BY 1 ON CONFLICT (tenant_id) DO NOTHING',
      [tenantIds],
    );
    return this.db.query<ChainHead>(
      'SELECT * FROM audit_chains WHERE tenant_id = ANY($1::uuid[]) ORDER BY tenant_id FOR UPDATE',
      [tenantIds],
    );
  }

  /** The tenant's chain row, created when missing, locked until the transaction ends. */
  async lockHead(tenantId: string): Promise<ChainHead> {
    return (await this.lockHeads([tenantId]))[0];
  }

  /** Every head that links already lie past, locked (in tenant order). */
  lockHeadsBehindLinks(): Promise<ChainHead[]> {
    return this.db.query<ChainHead>(
      `SELECT * FROM audit_chains c WHERE EXISTS (
         SELECT 1 FROM audit_links l WHERE l.tenant_id = c.tenant_id AND l.seq > c.head_seq)
       ORDER BY tenant_id FOR UPDATE`,
    );
  }

  /** The unsigned heads past link 0 of tenants that still exist, locked (in tenant order). */
  lockUnsignedHeads(): Promise<ChainHead[]> {
    // A purged tenant's head stays unsigned: its keys are gone.
    return this.db.query<ChainHead>(
      `SELECT * FROM audit_chains c WHERE head_signature IS NULL AND head_seq > 0
         AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.tenant_id)
       ORDER BY tenant_id FOR UPDATE`,
    );
  }

  /** Moves the heads (seq, hash and their signature). */
  async updateHeads(heads: SignedHead[]): Promise<void> {
    await this.db.query(
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

  /** Appends the links. */
  async insertLinks(links: Link[]): Promise<void> {
    await this.db.query(
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
  }

  /**
   * The links past the heads (tenant ids and head seqs), in (tenant, seq) order, with their records: what a
   * sealer that wrote its links but not its head would leave. Normally none: one probe of the key per tenant.
   */
  linksPastHeads(heads: Pick<ChainHead, 'tenant_id' | 'head_seq'>[]): Promise<StoredLink[]> {
    return this.db.query<StoredLink>(
      `SELECT l.tenant_id AS link_tenant_id, l.seq::text AS seq, l.prev_hash, l.hash, l.key_id, l.record_id,
         ${recordColumns('r')}
       FROM unnest($1::uuid[], $2::bigint[]) AS h(tenant_id, seq)
       JOIN audit_links l ON l.tenant_id = h.tenant_id AND l.seq > h.seq
       LEFT JOIN audit_records r ON r.xid = l.record_xid AND r.id = l.record_id AND r.tenant_id = l.tenant_id
       ORDER BY l.tenant_id, l.seq`,
      [heads.map((h) => h.tenant_id), heads.map((h) => h.head_seq)],
    );
  }

  /** The tenant's chain row, or null. */
  async head(tenantId: string): Promise<ChainHead | null> {
    const heads = await this.db.query<ChainHead>('SELECT * FROM audit_chains WHERE tenant_id = $1', [
      tenantId,
    ]);
    return heads[0] ?? null;
  }

  /** The signed heads of tenants that still exist (every tenant's, or one's), in tenant order. */
  signedHeads(tenantId: string | null): Promise<ChainHead[]> {
    return this.db.query<ChainHead>(
      `SELECT c.* FROM audit_chains c JOIN tenants t ON t.id = c.tenant_id
       WHERE c.head_signature IS NOT NULL AND ($1::uuid IS NULL OR c.tenant_id = $1)
       ORDER BY c.tenant_id`,
      [tenantId],
    );
  }

  /** Tenants that have a chain. */
  async tenants(): Promise<string[]> {
    const rows = await this.db.query<{ tenant_id: string }>(
      'SELECT tenant_id FROM audit_chains ORDER BY tenant_id',
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Tenants that have a chain, audit records or links. */
  async verifiable(): Promise<string[]> {
    const rows = await this.db.query<{ tenant_id: string }>(
      `SELECT tenant_id FROM audit_chains UNION SELECT DISTINCT tenant_id FROM audit_records
       UNION SELECT DISTINCT tenant_id FROM audit_links ORDER BY 1`,
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Up to `limit` of the tenant's links from `from` up to `to`, in order, with their records (if still there). */
  links(
    tenantId: string,
    from: string,
    to: string,
    limit: number,
  ): Promise<(LinkedRow & { record_id: string })[]> {
    return this.db.query(
      `SELECT l.seq, l.prev_hash, l.hash, l.key_id, l.record_id, ${readRecordColumns('r')} FROM audit_links l
       LEFT JOIN audit_records r ON r.xid = l.record_xid AND r.id = l.record_id AND r.tenant_id = l.tenant_id
       WHERE l.tenant_id = $1 AND l.seq >= $2 AND l.seq <= $3 ORDER BY l.seq LIMIT ${limit}`,
      [tenantId, from, to],
    );
  }

  /** The tenant's link `seq` (its hash), or null when there is no such link. */
  async linkAt(tenantId: string, seq: string): Promise<{ hash: string | null } | null> {
    const links = await this.db.query<{ hash: string | null }>(
      'SELECT hash FROM audit_links WHERE tenant_id = $1 AND seq = $2',
      [tenantId, seq],
    );
    return links[0] ?? null;
  }

  /**
   * The tenant's records behind the sealer's cursor (so they were chained): those no link names, or all of
   * them and its links, whichever is more (what a missing chain row leaves behind).
   */
  async countChained(tenantId: string, { unlinkedOnly }: { unlinkedOnly: boolean }): Promise<number> {
    const [{ n }] = await this.db.query<{ n: number }>(
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

  /** Whether the tenant still exists (a purged tenant's keys went with it; its audit trail stays). */
  async tenantExists(tenantId: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId]);
    return rows.length > 0;
  }

  /**
   * Up to `limit` of the tenant's links after the anchor, in order, each with whether its record was created
   * before `cutoff`.
   */
  linksAfterAnchor(
    tenantId: string,
    anchorSeq: string,
    cutoff: Date,
    limit: number,
  ): Promise<{ seq: string; hash: string; old: boolean }[]> {
    return this.db.query(
      `SELECT l.seq, l.hash, r.created_at < $3 AS old FROM audit_links l
       JOIN audit_records r ON r.xid = l.record_xid AND r.id = l.record_id
       WHERE l.tenant_id = $1 AND l.seq > $2 ORDER BY l.seq LIMIT ${limit}`,
      [tenantId, anchorSeq, cutoff],
    );
  }

  /** Moves the tenant's retention anchor to link `seq` (signed). */
  async moveAnchor(
    tenantId: string,
    seq: string,
    hash: string,
    keyId: string,
    signature: string,
  ): Promise<void> {
    await this.db.query(
      `UPDATE audit_chains SET anchor_seq = $2, anchor_hash = $3, anchor_key_id = $4, anchor_signature = $5
       WHERE tenant_id = $1`,
      [tenantId, seq, hash, keyId, signature],
    );
  }

  /** Deletes the tenant's links after `afterSeq` up to `throughSeq`, and their records. */
  async deleteLinksWithRecords(tenantId: string, afterSeq: string, throughSeq: string): Promise<void> {
    await this.db.query(
      `WITH gone AS (
         DELETE FROM audit_links WHERE tenant_id = $1 AND seq > $2 AND seq <= $3 RETURNING record_xid, record_id
       )
       DELETE FROM audit_records r USING gone WHERE r.xid = gone.record_xid AND r.id = gone.record_id`,
      [tenantId, afterSeq, throughSeq],
    );
  }
}
