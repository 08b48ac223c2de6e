import { AuditChain } from '../audit/audit-chain.service';
import { AuditCheckpoints } from '../audit/audit-checkpoints.service';
import { AuditRetention } from '../audit/audit-retention.service';
import { Command, fail, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const auditExport: Command = {
  usage: 'audit:export --since <ISO 8601 date> [--tenant <tenant id>]',
  summary:
    'Write every audit record created at or after --since to stdout as JSON Lines (oldest first), for a SIEM, then one line {"checkpoint": ...} per tenant: its signed chain head, to keep outside the database for audit:verify --checkpoint.',
  run: (args, config) => {
    const { values } = parse(args, { since: { type: 'string' }, tenant: { type: 'string' } });
    const since = typeof values.since === 'string' ? new Date(values.since) : null;
    if (since === null || Number.isNaN(since.getTime())) {
      throw new UsageError('--since must be an ISO 8601 date, e.g. 2026-01-31 or 2026-01-31T12:00:00Z');
    }
    const tenant = typeof values.tenant === 'string' ? values.tenant : undefined;
    if (tenant !== undefined && !UUID.test(tenant)) {
      throw new UsageError('--tenant must be a tenant id (UUID)');
    }
    return withMasterKeys(config, async (app) => {
      for await (const record of app.get(AuditRetention).export(since, tenant)) {
        out(JSON.stringify(record));
      }
      const chain = app.get(AuditChain);
      for (const checkpoint of await app.get(AuditCheckpoints).current(tenant)) {
        // Never hand out a head this vault did not sign: it would be kept as a checkpoint that fails later.
        const head = await chain.head(checkpoint.tenant_id);
        if (head !== null && (await chain.headHolds(head).catch(() => false))) {
          out(JSON.stringify({ checkpoint }));
        } else {
          fail(
            `tenant ${checkpoint.tenant_id}: its chain head is not signed by this vault, no checkpoint written: run audit:verify`,
          );
        }
      }
    });
  },
};
