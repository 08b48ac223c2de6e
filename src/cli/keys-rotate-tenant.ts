import { recordOperatorAction } from './operator-audit';
import { KeyRotation } from '../crypto/key-rotation.service';
import { Command, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';

export const keysRotateTenant: Command = {
  usage: 'keys:rotate-tenant --tenant <tenant id>',
  summary: 'Create a new data key for the tenant; new writes use it (run keys:reencrypt to move old tokens).',
  run: (args, config) => {
    const { values } = parse(args, { tenant: { type: 'string' } });
    const tenantId = typeof values.tenant === 'string' ? values.tenant : '';
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId)) {
      throw new UsageError('--tenant must be a tenant id (UUID)');
    }
    return withMasterKeys(config, async (app) => {
      const version = await app.get(KeyRotation).rotateDataKey(tenantId);
      await recordOperatorAction(
        app,
        [tenantId],
        'rotate',
        `Data key rotated to version ${version} (operator CLI)`,
      );
      out(`Tenant ${tenantId} now writes with data key version ${version}.`);
    });
  },
};
