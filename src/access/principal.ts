import type { ApplicationType } from './application-type';
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
