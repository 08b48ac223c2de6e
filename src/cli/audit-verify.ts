import { AuditChain } from '../audit/audit-chain.service';
import { CliError, Command, out, parse, UsageError, withAppContext } from './kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const auditVerify: Command = {
  usage: 'audit:verify [--tenant <tenant id>]',
  summary:
    "Chain new audit records, then walk each tenant's hash chain (or one tenant's) and name the first broken link. Exit code 1 when one is broken.",
  run: (args, config) => {
    const { values } = parse(args, { tenant: { type: 'string' } });
    const tenant = typeof values.tenant === 'string' ? values.tenant : undefined;
    if (tenant !== undefined && !UUID.test(tenant)) {
      throw new UsageError('--tenant must be a tenant id (UUID)');
    }
    return withAppContext(config, async (app) => {
      const chain = app.get(AuditChain);
      await chain.sealAll();
      const tenants = tenant === undefined ? await chain.tenants() : [tenant];
      let broken = 0;
      for (const tenantId of tenants) {
        const breach = await chain.verify(tenantId);
        if (breach === null) {
          out(`tenant ${tenantId}: ok`);
          continue;
        }
        broken++;
        const record = breach.recordId === null ? '' : ` (record ${breach.recordId})`;
        out(`tenant ${tenantId}: BROKEN at link ${breach.seq ?? '?'}${record}: ${breach.reason}`);
      }
      if (broken > 0) {
        throw new CliError(`${broken} of ${tenants.length} audit chain(s) broken`);
      }
      out(`${tenants.length} audit chain(s) verified`);
    });
  },
};
