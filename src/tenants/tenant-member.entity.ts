import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { User } from './user.entity';

export const MEMBER_ROLES = ['OWNER', 'ADMIN', 'READ_ONLY'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

@Entity('tenant_members')
export class TenantMember {
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

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;
}
