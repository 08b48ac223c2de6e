import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { ACTOR_TYPES, AUDIT_ENTITY_TYPES, AuditRow } from '../audit-event';

const OUTCOMES = ['success', 'denied', 'failed'];

/** GET /logs filters (snake_case as the SDK sends them); dates are ISO 8601, `end_date` exclusive. */
export class ListLogsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: Object.keys(AUDIT_ENTITY_TYPES) })
  @IsOptional()
  @IsIn(Object.keys(AUDIT_ENTITY_TYPES))
  entity_type?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(400)
  entity_id?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'created_at at or after' })
  @IsOptional()
  @IsISO8601({ strict: true })
  start_date?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'created_at before' })
  @IsOptional()
  @IsISO8601({ strict: true })
  end_date?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all')
  actor_id?: string;

  @ApiPropertyOptional({ example: 'read' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  operation?: string;

  @ApiPropertyOptional({ enum: OUTCOMES })
  @IsOptional()
  @IsIn(OUTCOMES)
  outcome?: string;

  /** The SDK's cursor parameter; this vault pages by `page` and ignores it. */
  @ApiPropertyOptional({ description: 'Accepted for SDK compatibility; ignored (use page).' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  start?: string;
}

export class LogDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) actor_id: string | null;
  @ApiProperty({ enum: ACTOR_TYPES }) actor_type: string;
  @ApiProperty({ enum: Object.keys(AUDIT_ENTITY_TYPES) }) entity_type: string;
  @ApiProperty({ nullable: true, type: String }) entity_id: string | null;
  @ApiProperty({ example: 'read' }) operation: string;
  @ApiProperty({ enum: OUTCOMES }) outcome: string;
  @ApiProperty() message: string;
  @ApiProperty({ nullable: true, type: String }) request_id: string | null;
  @ApiProperty({ nullable: true, type: String }) remote_address: string | null;
  @ApiProperty({ nullable: true, type: String }) user_agent: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class LogPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [LogDto] }) data: LogDto[];
}

export class LogEntityTypeDto {
  @ApiProperty({ example: 'Token' }) display_name: string;
  @ApiProperty({ example: 'token' }) value: string;
}

export function presentLog(row: AuditRow): LogDto {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    actor_id: row.actor_id,
    actor_type: row.actor_type,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    operation: row.operation,
    outcome: row.outcome,
    message: row.message,
    request_id: row.request_id,
    remote_address: row.remote_address,
    user_agent: row.user_agent,
    created_at: new Date(row.created_at).toISOString(),
  };
}
