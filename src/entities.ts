import { MIGRATIONS } from './migrations';
import { Application } from './applications/application.entity';
import { ApplicationKey } from './applications/application-key.entity';
import { ReactorFormula } from './reactor-formulas/reactor-formula.entity';
import { Proxy } from './proxies/proxy.entity';
import { Reactor } from './reactors/reactor.entity';
import { ReactorRun } from './reactors/reactor-run.entity';
import { TenantKey } from './crypto/tenant-key.entity';
import { Invitation } from './tenants/invitations/invitation.entity';
import { InvitationMail } from './tenants/invitations/invitation-mail.entity';
import { TenantMember } from './tenants/tenant-member.entity';
import { Tenant } from './tenants/tenant.entity';
import { User } from './tenants/user.entity';
import { Token } from './tokens/token.entity';
import { Webhook } from './webhooks/webhook.entity';
import { ClientKey } from './client-keys/client-key.entity';

export const ENTITIES = [
  Tenant,
  User,
  TenantMember,
  Application,
  ApplicationKey,
  TenantKey,
  Token,
  ReactorFormula,
  Reactor,
  ReactorRun,
  Invitation,
  InvitationMail,
  Proxy,
  Webhook,
  ClientKey,
];

/**
 * The schema of the vault: every module's entities and the migrations in order. Kept here, at the top,
 * so database/ stays generic; every DataSource (the app, the CLI, ormconfig.ts, tests) spreads it in.
 */
export const SCHEMA = { entities: ENTITIES, migrations: MIGRATIONS };
