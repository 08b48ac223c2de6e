import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../../common/pagination';
import { MemberDto } from '../../dto/member.dto';
import { INVITATION_STATUSES, InvitationStatus } from '../invitation.entity';
import { DELIVERY_STATUSES, DeliveryStatus } from '../invitation-mail.entity';

/** The roles an invitation may grant: accepting makes the person an ADMIN (see MembersService.addMember). */
export const INVITED_ROLES = ['ADMIN'] as const;
export type InvitedRole = (typeof INVITED_ROLES)[number];

export class CreateInvitationDto {
  @ApiProperty({
    example: 'colleague@example.com',
    maxLength: 254,
    description:
      'A well-formed address (RFC 5322), stored and compared in canonical form: NFKC, then lower case. ' +
      'That form must be ASCII (international domains as xn-- labels, each in one script).',
  })
  @IsString()
  @MaxLength(254)
  @IsEmail({ allow_display_name: false, require_tld: true, allow_ip_domain: false })
  email: string;

  @ApiPropertyOptional({
    enum: INVITED_ROLES,
    default: 'ADMIN',
    description: 'The role the person gets on accepting: ADMIN (the role every invitation grants).',
  })
  @IsOptional()
  @IsIn(INVITED_ROLES)
  role?: InvitedRole;
}

export class ListInvitationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: INVITATION_STATUSES })
  @IsOptional()
  @IsIn(INVITATION_STATUSES)
  status?: InvitationStatus;
}

export class AcceptInvitationDto {
  @ApiProperty({ description: 'The secret from the invitation link.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  token: string;

  @ApiProperty({ example: 'Jane', maxLength: 100 })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  first_name: string;

  @ApiProperty({ example: 'Doe', maxLength: 100 })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  last_name: string;
}

export class InvitationDeliveryDto {
  @ApiProperty({
    enum: DELIVERY_STATUSES,
    description:
      'pending: not sent yet (the mail server refused or could not be reached; it is retried with growing ' +
      "delays); sent: handed to the mail server; logged: not mailed, written to the vault's log because no " +
      'SMTP_URL is set (development); failed: given up after repeated attempts (resend it).',
  })
  status: DeliveryStatus;
  @ApiProperty({ type: 'integer', description: 'Attempts so far.' }) attempts: number;
  @ApiProperty({ nullable: true, type: String }) last_attempt_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    example: 'ECONNECTION',
    description: 'Why the last attempt failed, as an error code (and the SMTP reply code).',
  })
  last_error: string | null;
}

export class InvitationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: INVITED_ROLES }) role: InvitedRole;
  @ApiProperty({ enum: INVITATION_STATUSES }) status: InvitationStatus;
  @ApiProperty() expires_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
  @ApiProperty({
    type: InvitationDeliveryDto,
    nullable: true,
    description:
      'The invitation e-mail of the current link; null for invitations made before it was tracked.',
  })
  delivery: InvitationDeliveryDto | null;
}

export class InvitationPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [InvitationDto] }) data: InvitationDto[];
}

export class AcceptedInvitationDto {
  @ApiProperty({ type: MemberDto }) member: MemberDto;
}
