import { plainName } from '../common/display-name';
import { AppConfig } from '../config/app-config';
import { canonicalEmail, emailRefusal } from '../tenants/email';
import { TenantsService } from '../tenants/tenants.service';
import { Command, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';

async function createTenant(args: string[], config: AppConfig): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    'owner-email': { type: 'string' },
    json: { type: 'boolean' },
  });
  const name = typeof values.name === 'string' ? plainName(values.name) : '';
  const ownerEmail = typeof values['owner-email'] === 'string' ? canonicalEmail(values['owner-email']) : '';
  if (name === '' || name.length > 200) {
    throw new UsageError('--name is required (1 to 200 characters)');
  }
  if (ownerEmail === '' || emailRefusal(ownerEmail) !== null) {
    throw new UsageError(
      '--owner-email is required and must be an ASCII e-mail address (see docs/guide.md, Security notes)',
    );
  }
  const created = await withMasterKeys(config, (app) =>
    app.get(TenantsService).createTenant(name, ownerEmail),
  );
  if (values.json === true) {
    out(
      JSON.stringify({
        tenant_id: created.tenant.id,
        name: created.tenant.name,
        application_id: created.application.id,
        key: created.key,
      }),
    );
    return;
  }
  out(
    [
      `Created tenant "${created.tenant.name}" (${created.tenant.id}) owned by ${ownerEmail}.`,
      `Management application: ${created.application.id}`,
      `Management key (shown once, store it now): ${created.key}`,
    ].join('\n'),
  );
}

export const tenantCreate: Command = {
  usage: 'tenant:create --name <name> --owner-email <email> [--json]',
  summary: 'Create a tenant, its OWNER member and a management application; print its key once.',
  run: createTenant,
};
