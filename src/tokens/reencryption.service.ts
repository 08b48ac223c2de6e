import { Injectable } from '@nestjs/common';
import { KeyInventory } from '../crypto/key-inventory.service';
import { TokenCipher } from './token-cipher.service';
import { Token } from './token.entity';
import { TokensRepository } from './tokens.repository';

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
    private readonly tokens: TokensRepository,
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
        const rows = await this.tokens.findSealedBefore(tenantId, latest, after, batchSize);
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
    return (await this.tokens.reseal(row.tenantId, row.id, old, sealed)) ? 1 : 0;
  }
}
