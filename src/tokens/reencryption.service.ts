import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { KeyInventory } from '../crypto/key-inventory.service';
import { TokenCipher } from './token-cipher.service';
import { Token } from './token.entity';

export interface ReencryptProgress {
  tenantId: string;
  reencrypted: number;
}

/**
 * Moves token ciphertexts to each tenant's newest data key, batch by batch. Every row is swapped only if
 * its ciphertext is unchanged since it was read (a concurrent update wins), so the command can run while
 * the service serves traffic, be interrupted at any point, and resume by running again.
 */
@Injectable()
export class ReencryptionService {
  constructor(
    @InjectRepository(Token) private readonly tokens: Repository<Token>,
    private readonly inventory: KeyInventory,
    private readonly cipher: TokenCipher,
  ) {}

  async reencryptAll(batchSize = 500, onBatch?: (progress: ReencryptProgress) => void): Promise<number> {
    let total = 0;
    for (const [tenantId, latest] of await this.inventory.latestDataKeyVersions()) {
      // A walk along the primary key (tenant_id, id), each batch after the last id seen: no index on the key
      // version is needed, which every token write would otherwise pay for. A row whose swap lost to a
      // concurrent write is passed over in this run, like writes made by instances that have not yet seen
      // the newest key: the next run moves them.
      let after = '';
      for (;;) {
        const rows = await this.tokens
          .createQueryBuilder('t')
          .select(['t.tenantId', 't.id', 't.data'])
          .where('t.tenant_id = :tenantId AND t.id > :after', { tenantId, after })
          .andWhere('t.data IS NOT NULL AND t.data_key_version < :latest', { latest })
          .orderBy('t.id')
          .limit(batchSize)
          .getMany();
        if (rows.length === 0) {
          break;
        }
        let done = 0;
        for (const row of rows) {
          done += await this.reencrypt(row);
        }
        after = rows[rows.length - 1].id;
        total += done;
        onBatch?.({ tenantId, reencrypted: done });
      }
    }
    return total;
  }

  private async reencrypt(row: Pick<Token, 'tenantId' | 'id' | 'data'>): Promise<number> {
    const old = row.data as Buffer;
    const data = await this.cipher.open(row.tenantId, row.id, old);
    const sealed = await this.cipher.seal(row.tenantId, row.id, data);
    const result: unknown[] = await this.tokens.query(
      `UPDATE tokens SET data = $1, data_key_version = $2
       WHERE tenant_id = $3 AND id = $4 AND data = $5 RETURNING 1`,
      [sealed.blob, sealed.version, row.tenantId, row.id, old],
    );
    return (Array.isArray(result[0]) ? result[0].length : result.length) > 0 ? 1 : 0;
  }
}
