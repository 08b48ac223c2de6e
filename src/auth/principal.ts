import type { ApplicationType } from '../applications/application.entity';
import type { AccessRule } from './access-rules';
import type { Permission } from './permissions';

/** The authenticated caller of a request. */
export interface Principal {
  tenantId: string;
  applicationId: string;
  applicationType: ApplicationType;
  permissions: ReadonlySet<Permission>;
  rules: readonly AccessRule[];
}
