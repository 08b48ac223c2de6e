import { Foundation1763769600000 } from './1763769600000-foundation';
import { Tokens1763773200000 } from './1763773200000-tokens';
import { TokensMaintenance1763776800000 } from './1763776800000-tokens-maintenance';
import { Reactors1763780400000 } from './1763780400000-reactors';
import { OfficialFormulas1763780460000 } from './1763780460000-official-formulas';
import { Invitations1763784000000 } from './1763784000000-invitations';
import { Proxies1763787600000 } from './1763787600000-proxies';
import { CanonicalEmails1763791500000 } from './1763791500000-canonical-emails';
import { Delegation1763794800000 } from './1763794800000-delegation';
import { IdempotencyKeys1763802000000 } from './1763802000000-idempotency-keys';
import { InvitationOutbox1763801000000 } from './1763801000000-invitation-outbox';
import { RateLimits1763805000000 } from './1763805000000-rate-limits';
import { Audit1764000000000 } from './1764000000000-audit';
import { Webhooks1764100000000 } from './1764100000000-webhooks';
import { CodeReactors1764300000000 } from './1764300000000-code-reactors';
import { ReactorRuns1764300100000 } from './1764300100000-reactor-runs';
import { ApplicationKeys1764400000000 } from './1764400000000-application-keys';
import { TenantSelf1764400100000 } from './1764400100000-tenant-self';
import { AuditLinks1764500000000 } from './1764500000000-audit-links';
import { TokensNoReencryptIndex1764600000000 } from './1764600000000-tokens-no-reencrypt-index';
import { TokensMetadataIndexNotNull1764600100000 } from './1764600100000-tokens-metadata-index-not-null';
import { UnsealSplits1764700000000 } from './1764700000000-unseal-splits';
import { ReactorRunsOwner1764700400000 } from './1764700400000-reactor-runs-owner';
import { WebhookDeliveryLeases1764700450000 } from './1764700450000-webhook-delivery-leases';
import { AuditHeadSignatures1764700500000 } from './1764700500000-audit-head-signatures';
import { AuditTokenIds1764700700000 } from './1764700700000-audit-token-ids';
import { AuditSealResume1764800000000 } from './1764800000000-audit-seal-resume';
import { InvitationMailLogged1764850000000 } from './1764850000000-invitation-mail-logged';
import { WebhookDeliveryTrace1764900000000 } from './1764900000000-webhook-delivery-trace';
import { TokenIntents1765100000000 } from './1765100000000-token-intents';
import { Sessions1765200000000 } from './1765200000000-sessions';
import { ClientEncryptionKeys1765300000000 } from './1765300000000-client-encryption-keys';
import { Documents1765400000000 } from './1765400000000-documents';
import { ProxyTransformLists1765500000000 } from './1765500000000-proxy-transform-lists';

/** Every migration, in order. Listed by class so the same list works from TypeScript (tests) and dist. */
export const MIGRATIONS = [
  Foundation1763769600000,
  Tokens1763773200000,
  TokensMaintenance1763776800000,
  Reactors1763780400000,
  OfficialFormulas1763780460000,
  Invitations1763784000000,
  Proxies1763787600000,
  CanonicalEmails1763791500000,
  Delegation1763794800000,
  InvitationOutbox1763801000000,
  IdempotencyKeys1763802000000,
  RateLimits1763805000000,
  Audit1764000000000,
  Webhooks1764100000000,
  CodeReactors1764300000000,
  ReactorRuns1764300100000,
  ApplicationKeys1764400000000,
  TenantSelf1764400100000,
  AuditLinks1764500000000,
  TokensNoReencryptIndex1764600000000,
  TokensMetadataIndexNotNull1764600100000,
  UnsealSplits1764700000000,
  ReactorRunsOwner1764700400000,
  WebhookDeliveryLeases1764700450000,
  AuditHeadSignatures1764700500000,
  AuditTokenIds1764700700000,
  AuditSealResume1764800000000,
  InvitationMailLogged1764850000000,
  WebhookDeliveryTrace1764900000000,
  TokenIntents1765100000000,
  Sessions1765200000000,
  ClientEncryptionKeys1765300000000,
  Documents1765400000000,
  ProxyTransformLists1765500000000,
];
