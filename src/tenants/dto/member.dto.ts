import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsUUID } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { ToArray } from '../../common/query';
import { MEMBER_ROLES, MemberRole } from '../tenant-member.entity';

export const MAX_MEMBER_PAGE_SIZE = 50;

export class ListMembersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: [String], description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsUUID('all', { each: true })
  user_id?: string[];
}

export class UserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiPropertyOptional({ nullable: true }) email: string | null;
  @ApiPropertyOptional({ nullable: true }) first_name: string | null;
  @ApiPropertyOptional({ nullable: true }) last_name: string | null;
  @ApiPropertyOptional({ nullable: true, format: 'uri' }) picture: string | null;
}

export class MemberDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ enum: MEMBER_ROLES }) role: string;
  @ApiProperty({ type: UserDto }) user: UserDto;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiProperty({ description: 'The same instant as created_at, under the name the hosted vault SDKs read.' })
  created_date: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class MemberPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [MemberDto] }) data: MemberDto[];
}

/** Roles a member can be given; OWNER is held by the one who owns the tenant and is never handed out here. */
export const ASSIGNABLE_ROLES = ['ADMIN', 'READ_ONLY'] as const satisfies readonly MemberRole[];

export class UpdateMemberDto {
  @ApiProperty({ enum: ASSIGNABLE_ROLES })
  @IsIn(ASSIGNABLE_ROLES)
  role: (typeof ASSIGNABLE_ROLES)[number];
}
