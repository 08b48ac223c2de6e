import { AuditRetention } from '../audit/audit-retention.service';
import { Command, out, parse, UsageError, withAppContext } from './kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const auditExport: Command = {
  usage: 'audit:export --since <ISO 8601 date> [--tenant <tenant id>]',
  summary:
    'Write every audit record created at or after --since to stdout as JSON Lines (oldest first), for a SIEM.',
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
    return withAppContext(config, async (app) => {
      for await (const record of app.get(AuditRetention).export(since, tenant)) {
        out(JSON.stringify(record));
      }
    });
  },
};
