import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { TRANSFORMS } from './access-rules';

/**
 * The fields an application's rules and a session's rules share, validated and documented once
 * (src/applications/dto, src/sessions/dto); imported as a namespace: `@Rule.Priority()`.
 */
export function Description(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ nullable: true, maxLength: 500 }),
    IsOptional(),
    IsString(),
    MaxLength(500),
  );
}

export function Priority(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ description: 'Rules are tried in ascending priority.', minimum: 0, maximum: 1000000 }),
    IsInt(),
    Min(0),
    Max(1000000),
  );
}

export function Transform(): PropertyDecorator {
  return applyDecorators(ApiProperty({ enum: TRANSFORMS }), IsIn(TRANSFORMS));
}

/** A rule's token permissions; `maxItems` caps the list where the caller's rules may be many. */
export function Permissions(maxItems?: number): PropertyDecorator {
  const cap = maxItems === undefined ? [] : [ArrayMaxSize(maxItems)];
  return applyDecorators(
    ApiProperty({ type: [String], example: ['token:read'] }),
    IsArray(),
    ...cap,
    IsString({ each: true }),
  );
}

/** The optional `permissions` of an application or a session (up to 100 names). */
export function PermissionList(example: string[]): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: [String], example }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(100),
    IsString({ each: true }),
  );
}

/** The optional `rules` of an application or a session (up to 100, each validated as `rule`). */
export function List(rule: new () => object): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: [rule] }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(100),
    IsObject({ each: true }),
    ValidateNested({ each: true }),
    Type(() => rule),
  );
}
