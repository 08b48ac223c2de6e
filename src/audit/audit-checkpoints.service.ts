import { Injectable, Logger } from '@nestjs/common';
import { Checkpoint, headSignature } from './audit-chain';
import { AuditChain } from './audit-chain.service';
import { AuditChainsRepository } from './audit-chains.repository';

/**
 * Checkpoints: a tenant's signed chain head as the operator keeps it outside the database (audit:export
 * writes them, and a log line carries each new one). Against a kept checkpoint, audit:verify tells a chain
 * cut below it, rewritten at it, or deleted whole (records and chain row alike), which the database alone
 * can no longer show.
 */
@Injectable()
export class AuditCheckpoints {
  private readonly logger = new Logger('AuditCheckpoints');
  /** The last checkpoint logged per tenant, so that only a head that moved is logged again. */
  private readonly logged = new Map<string, string>();

  constructor(
    private readonly chains: AuditChainsRepository,
    private readonly chain: AuditChain,
  ) {}

  /**
   * The signed heads as checkpoints (every tenant's, or one's); heads not signed yet, and those of purged
   * tenants (whose keys are gone), are left out.
   */
  async current(tenantId?: string): Promise<Checkpoint[]> {
    const heads = await this.chains.signedHeads(tenantId ?? null);
    return heads.map((h) => ({
      tenant_id: h.tenant_id,
      seq: h.head_seq,
      hash: h.head_hash,
      signed_at: h.head_signed_at as string,
      key_id: h.head_key_id as string,
      signature: h.head_signature as string,
    }));
  }

  /**
   * Logs (info) the checkpoint of every tenant whose head moved since this process last logged it: the log
   * output then keeps checkpoints outside the database. Reads only stored signatures: no key is needed, so
   * it runs the same on a sealed vault.
   */
  async logNew(): Promise<number> {
    let logged = 0;
    for (const checkpoint of await this.current()) {
      if (this.logged.get(checkpoint.tenant_id) !== checkpoint.signature) {
        this.logger.log({ checkpoint }, 'audit checkpoint');
        this.logged.set(checkpoint.tenant_id, checkpoint.signature);
        logged++;
      }
    }
    return logged;
  }

  /** What is wrong with the tenant's chain against a kept checkpoint, in one line; null when it holds. */
  async check(checkpoint: Checkpoint): Promise<string | null> {
    const { tenant_id: tenantId, seq } = checkpoint;
    // Checked first: the tenant's keys may still be cached in this process.
    if (!(await this.chains.tenantExists(tenantId))) {
      return 'the tenant no longer exists (purged, or its row deleted): its chain cannot be checked';
    }
    let chain;
    try {
      chain = await this.chain.key(tenantId, checkpoint.key_id);
    } catch (err) {
      return `the tenant's chain key cannot be loaded (${(err as Error).message})`;
    }
    if (chain === null || headSignature(chain.key, checkpoint) !== checkpoint.signature) {
      return 'the checkpoint is not signed by this vault';
    }
    const head = await this.chain.head(tenantId);
    if (head === null) {
      return `the chain is missing: no chain row, though a checkpoint at link ${seq} was signed ${checkpoint.signed_at}`;
    }
    if (BigInt(head.head_seq) < BigInt(seq)) {
      return `the chain was cut: it ends at link ${head.head_seq}, below the checkpoint at link ${seq}`;
    }
    // Retention deleted it: the signed anchor, which verify checks, lies past it.
    if (seq === '0' || BigInt(seq) < BigInt(head.anchor_seq)) {
      return null;
    }
    let hash: string | null;
    if (seq === head.anchor_seq) {
      hash = head.anchor_hash;
    } else {
      const link = await this.chains.linkAt(tenantId, seq);
      if (link === null) {
        return `link ${seq} of the checkpoint is missing`;
      }
      hash = link.hash;
    }
    return hash === checkpoint.hash
      ? null
      : `link ${seq} differs from the checkpoint: the chain was rewritten`;
  }
}
