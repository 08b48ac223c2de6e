import { recordOperatorAction } from './operator-audit';
import { ReencryptionService } from '../tokens/reencryption.service';
import { Command, fail, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';

export const keysReencrypt: Command = {
  usage: 'keys:reencrypt [--batch-size <n>]',
  summary: "Move every token to its tenant's newest data key, in batches. Safe to interrupt and run again.",
  run: (args, config) => {
    const { values } = parse(args, { 'batch-size': { type: 'string' } });
    const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10000) {
      throw new UsageError('--batch-size must be an integer from 1 to 10000');
    }
    return withMasterKeys(config, async (app) => {
      const touched = new Set<string>();
      const total = await app.get(ReencryptionService).reencryptAll(batchSize, (p) => {
        touched.add(p.tenantId);
        fail(`tenant ${p.tenantId}: ${p.reencrypted} token(s) re-encrypted`);
      });
      await recordOperatorAction(
        app,
        [...touched],
        'reencrypt',
        'Tokens re-encrypted under the newest data key (operator CLI)',
      );
      out(`Re-encrypted ${total} token(s).`);
    });
  },
};
