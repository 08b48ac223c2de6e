import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsISO8601,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import {
  CONDITION_ATTRIBUTES,
  CONDITION_OPERATORS,
  RuleCondition,
  Transform,
} from '../../access/access-rules';
import * as Rule from '../../access/access-rule-fields';

export class SessionRuleConditionDto {
  @ApiProperty({ enum: CONDITION_ATTRIBUTES, description: 'The token attribute compared.' })
  @IsIn(CONDITION_ATTRIBUTES)
  attribute: RuleCondition['attribute'];

  @ApiProperty({ enum: CONDITION_OPERATORS })
  @IsIn(CONDITION_OPERATORS)
  operator: RuleCondition['operator'];

  @ApiProperty({ example: '0b5a4ba2-3c8e-4d1d-9e0b-1b7e1c1f0b11', maxLength: 400 })
  @IsString()
  @MinLength(1)
  @MaxLength(400)
  value: string;
}

export class SessionAccessRuleDto {
  @Rule.Description()
  description?: string | null;

  @Rule.Priority()
  priority: number;

  @ApiPropertyOptional({
    example: '/pci/',
    description: 'Container prefix the rule covers; give either this or `conditions`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(400)
  container?: string;

  @ApiPropertyOptional({
    type: [SessionRuleConditionDto],
    description: 'All must hold for the rule to apply (e.g. the token `id` equals one id).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => SessionRuleConditionDto)
  conditions?: SessionRuleConditionDto[];

  @Rule.Transform()
  transform: Transform;

  @Rule.Permissions(20)
  permissions: string[];
}

export class AuthorizeSessionDto {
  @ApiProperty({ description: 'The nonce of the session to authorize (one authorization per session).' })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  nonce: string;

  @Rule.PermissionList(['token:read'])
  permissions?: string[];

  @Rule.List(SessionAccessRuleDto)
  rules?: SessionAccessRuleDto[];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'When the session ends instead (in the future, at most 60 minutes from now).',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  expires_at?: string;
}

export class CreatedSessionDto {
  @ApiProperty({ description: 'The session key, for the page that created it (BT-API-KEY).' })
  session_key: string;
  @ApiProperty({ description: 'Handed to the backend, which authorizes the session with it.' })
  nonce: string;
  @ApiProperty({ format: 'date-time', description: '3 minutes after creation unless authorized otherwise.' })
  expires_at: string;
}
