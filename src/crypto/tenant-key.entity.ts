import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type TenantKeyKind = 'data' | 'hmac';

/** A tenant's data-encryption or HMAC key, stored only wrapped by a master key. */
@Entity('tenant_keys')
export class TenantKey {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  kind: TenantKeyKind;

  @PrimaryColumn('int')
  version: number;

  @Column('text', { name: 'master_key_id' })
  masterKeyId: string;

  @Column('text')
  wrapped: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** AAD of a wrapped key: a wrapped key copied to another tenant, kind or version does not open. */
export function keyContext(tenantId: string, kind: TenantKeyKind, version: number): string {
  return `tenant:${tenantId}:${kind}:${version}`;
}
