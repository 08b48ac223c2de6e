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
  /** Set when the caller is a session key: the session, and the application that authorized it (if any). */
  session?: { id: string; authorizedBy: string | null };
}
