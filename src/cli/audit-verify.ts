import { readFileSync } from 'node:fs';
import { Checkpoint, parseCheckpoints } from '../audit/audit-chain';
import { AuditChain } from '../audit/audit-chain.service';
import { AuditCheckpoints } from '../audit/audit-checkpoints.service';
import { CliError, Command, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The checkpoints of --checkpoint: a file (e.g. a saved audit:export output) or the JSON itself. */
function readCheckpoints(value: string): Checkpoint[] {
  const text = value.trimStart().startsWith('{') ? value : readFile(value);
  try {
    return parseCheckpoints(text);
  } catch (err) {
    throw new UsageError(`--checkpoint: ${(err as Error).message}`);
  }
}

function readFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--checkpoint: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

export const auditVerify: Command = {
  usage: 'audit:verify [--tenant <tenant id>] [--checkpoint <file or JSON>]',
  summary:
    "Chain new audit records, then check each tenant's signed chain head and walk its hash chain (or one tenant's), and, given checkpoints kept from audit:export or the log, that the chain still holds each one. One line per problem; exit code 1 when any.",
  run: (args, config) => {
    const { values } = parse(args, { tenant: { type: 'string' }, checkpoint: { type: 'string' } });
    const tenant = typeof values.tenant === 'string' ? values.tenant : undefined;
    if (tenant !== undefined && !UUID.test(tenant)) {
      throw new UsageError('--tenant must be a tenant id (UUID)');
    }
    const kept = typeof values.checkpoint === 'string' ? readCheckpoints(values.checkpoint) : [];
    return withMasterKeys(config, async (app) => {
      const chain = app.get(AuditChain);
      const checkpoints = app.get(AuditCheckpoints);
      let problems = 0;
      try {
        await chain.sealAll();
      } catch (err) {
        // A tampered head stops the sealer; verification below names what is wrong.
        problems++;
        out(`new audit records could not be chained: ${(err as Error).message}`);
      }
      const tenants =
        tenant !== undefined
          ? [tenant]
          : [...new Set([...(await chain.verifiable()), ...kept.map((c) => c.tenant_id)])].sort();
      let broken = 0;
      for (const tenantId of tenants) {
        const lines: string[] = [];
        const breach = await chain.verify(tenantId);
        if (breach?.purged === true) {
          out(`tenant ${tenantId}: not verifiable: ${breach.reason}`);
        } else if (breach !== null) {
          const record = breach.recordId === null ? '' : ` (record ${breach.recordId})`;
          lines.push(`BROKEN at link ${breach.seq ?? '?'}${record}: ${breach.reason}`);
        }
        for (const checkpoint of kept.filter((c) => c.tenant_id === tenantId)) {
          const problem = await checkpoints.check(checkpoint);
          if (problem !== null) {
            lines.push(`BROKEN against the checkpoint at link ${checkpoint.seq}: ${problem}`);
          }
        }
        lines.forEach((line) => out(`tenant ${tenantId}: ${line}`));
        if (lines.length === 0 && breach?.purged !== true) {
          out(`tenant ${tenantId}: ok`);
        } else if (lines.length > 0) {
          broken++;
        }
      }
      if (broken > 0 || problems > 0) {
        throw new CliError(`${broken} of ${tenants.length} audit chain(s) broken`);
      }
      out(`${tenants.length} audit chain(s) verified`);
    });
  },
};
