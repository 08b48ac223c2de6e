import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from './user.entity';
import { Audited } from '../database/audited';

export const MEMBER_ROLES = ['OWNER', 'ADMIN', 'READ_ONLY'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

@Entity('tenant_members')
export class TenantMember extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('uuid', { name: 'user_id' })
  userId: string;

  @ManyToOne(() => User, { eager: false })
  @JoinColumn({ name: 'user_id' })
  user?: User;

  @Column('text')
  role: MemberRole;
}
