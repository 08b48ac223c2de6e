import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { Database } from '../database/database.service';
import { MemberRole, TenantMember } from './tenant-member.entity';
import { User } from './user.entity';

/** A member about to be written: the user it is, its role and who added it. */
export interface NewMember {
  userId: string;
  role: MemberRole;
  createdBy: string | null;
}

/** A tenant's members, and the users they are (users are global: one per e-mail address). */
@Injectable()
export class MembersRepository {
  constructor(private readonly db: Database) {}

  /** One page of the tenant's members with their users, oldest first, and how many there are. */
  page(
    tenantId: string,
    page: { userIds?: string[]; offset: number; size: number },
  ): Promise<[TenantMember[], number]> {
    return this.db.repository(TenantMember).findAndCount({
      where: { tenantId, ...(page.userIds !== undefined ? { userId: In(page.userIds) } : {}) },
      relations: { user: true },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.size,
    });
  }

  find(tenantId: string, id: string): Promise<TenantMember | null> {
    return this.db.repository(TenantMember).findOne({ where: { tenantId, id } });
  }

  /** The member with its user; it must exist. */
  findWithUser(tenantId: string, id: string): Promise<TenantMember> {
    return this.db.repository(TenantMember).findOneOrFail({
      where: { tenantId, id },
      relations: { user: true },
    });
  }

  findOwner(tenantId: string): Promise<TenantMember | null> {
    return this.db.repository(TenantMember).findOne({
      where: { tenantId, role: 'OWNER' },
      relations: { user: true },
    });
  }

  /** The new member's id. */
  async insert(tenantId: string, member: NewMember): Promise<string> {
    const id = randomUUID();
    await this.db.repository(TenantMember).insert({
      tenantId,
      id,
      ...member,
      modifiedBy: null,
      modifiedAt: null,
    });
    return id;
  }

  async setRole(tenantId: string, id: string, role: MemberRole, by: string, at: Date): Promise<void> {
    await this.db.repository(TenantMember).update({ tenantId, id }, { role, modifiedBy: by, modifiedAt: at });
  }

  async remove(tenantId: string, id: string): Promise<void> {
    await this.db.repository(TenantMember).delete({ tenantId, id });
  }

  /** True when someone with this exact (canonical) e-mail is a member of the tenant. */
  async hasEmail(tenantId: string, email: string): Promise<boolean> {
    const rows = await this.db.query(
      'SELECT 1 FROM tenant_members m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = $1 AND u.email = $2',
      [tenantId, email],
    );
    return rows.length > 0;
  }

  /** The user with this exact (canonical) e-mail, byte for byte. */
  findUserByEmail(email: string): Promise<User | null> {
    return this.db.repository(User).findOne({ where: { email } });
  }

  async insertUser(
    email: string,
    names: { firstName: string | null; lastName: string | null },
  ): Promise<User> {
    const users = this.db.repository(User);
    const user = users.create({ id: randomUUID(), email, ...names, picture: null });
    await users.insert(user);
    return user;
  }

  async nameUser(userId: string, firstName: string, lastName: string): Promise<void> {
    await this.db.repository(User).update({ id: userId }, { firstName, lastName });
  }
}
