import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { IdAndNameQueryDto, PaginationDto } from '../../common/pagination';
import { AsSent } from '../../common/validation';
import { MAX_CODE_LENGTH } from '../../reactor-formulas/dto/reactor-formula.dto';
import { IdRefDto } from '../../reactors/dto/reactor.dto';
import { DisplayName } from '../../common/display-name';
import { MAX_LISTED_TRANSFORMS } from '../proxy-transform-rules';
import { ProxyTransformItemDto } from './proxy-transform.dto';

/** `request_transforms` / `response_transforms`: run in order, instead of the singular field of that side. */
function TransformList(side: 'request' | 'response'): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: [ProxyTransformItemDto],
      nullable: true,
      maxItems: MAX_LISTED_TRANSFORMS,
      description:
        side === 'request'
          ? 'Run in order on the request: `code` only. Not with `request_transform`.'
          : "Run in order on the destination's 2xx responses: `code`, `mask`, `append_json`, `append_text`, `append_header`. Not with `response_transform`.",
    }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_LISTED_TRANSFORMS),
    ValidateNested({ each: true }),
    Type(() => ProxyTransformItemDto),
  );
}

const EXAMPLE_TRANSFORM = `module.exports = async function (req) {
  const { body, headers } = req.args;
  return { body: { ...body, currency: req.configuration.currency }, headers };
};`;

/** The singular `request_transform` / `response_transform` run code only; other types go in the lists. */
export const TRANSFORM_TYPES = ['code'] as const;

export class ProxyTransformDto {
  @ApiPropertyOptional({ enum: TRANSFORM_TYPES, default: 'code' })
  @IsOptional()
  @IsIn(TRANSFORM_TYPES, { message: `must be one of: ${TRANSFORM_TYPES.join(', ')}` })
  type?: string;

  @ApiProperty({
    maxLength: MAX_CODE_LENGTH,
    example: EXAMPLE_TRANSFORM,
    description:
      'CommonJS exporting an async function of `{ args, configuration, bt }` that returns `{ body, headers }`.',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code: string;
}

/** A transform in a merge patch: `code` may be left out to keep the current one. */
export class ProxyTransformPatchDto {
  @ApiPropertyOptional({ enum: TRANSFORM_TYPES })
  @IsOptional()
  @IsIn(TRANSFORM_TYPES, { message: `must be one of: ${TRANSFORM_TYPES.join(', ')}` })
  type?: string;

  @ApiPropertyOptional({ maxLength: MAX_CODE_LENGTH })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code?: string;
}

/** Create and replace body (spec §4.6: update takes the same fields as create). */
export class ProxyBodyDto {
  @ApiProperty({ maxLength: 200, example: 'Acme Payments' })
  @DisplayName()
  name: string;

  @ApiProperty({
    example: 'https://api.example.com/v1',
    description: 'HTTPS with a DNS host name (no IP address, no user information); sub-paths are appended.',
  })
  @IsString()
  @MaxLength(2048)
  destination_url: string;

  @ApiPropertyOptional({ type: ProxyTransformDto, nullable: true, description: 'Runs on the request.' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProxyTransformDto)
  request_transform?: ProxyTransformDto | null;

  @ApiPropertyOptional({
    type: ProxyTransformDto,
    nullable: true,
    description: "Runs on the destination's 2xx responses.",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProxyTransformDto)
  response_transform?: ProxyTransformDto | null;

  @TransformList('request')
  request_transforms?: ProxyTransformItemDto[] | null;

  @TransformList('response')
  response_transforms?: ProxyTransformItemDto[] | null;

  @ApiPropertyOptional({
    type: IdRefDto,
    nullable: true,
    description:
      'A public or private application: `bt` in transforms, the rights to detokenize without auth, and the creator of the tokens `tokenize` transforms make (required with one).',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  application?: IdRefDto | null;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: { currency: 'USD' },
    description: 'String values for the transforms (`req.configuration`). Stored encrypted.',
  })
  @IsOptional()
  @IsObject()
  @AsSent()
  configuration?: Record<string, unknown> | null;

  @ApiPropertyOptional({ default: true, description: 'false: callers need only the proxy key.' })
  @IsOptional()
  @IsBoolean()
  require_auth?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'true: the request body is forwarded as sent, without replacing token expressions.',
  })
  @IsOptional()
  @IsBoolean()
  disable_detokenization?: boolean;
}

/**
 * PATCH body (application/merge-patch+json, RFC 7386): configuration and the transforms merge, the other
 * fields replace; null removes a transform, the application, the configuration or one of its entries.
 */
export class PatchProxyDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @DisplayName()
  name?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  destination_url?: string | null;

  @ApiPropertyOptional({ type: ProxyTransformPatchDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProxyTransformPatchDto)
  request_transform?: ProxyTransformPatchDto | null;

  @ApiPropertyOptional({ type: ProxyTransformPatchDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProxyTransformPatchDto)
  response_transform?: ProxyTransformPatchDto | null;

  @TransformList('request')
  request_transforms?: ProxyTransformItemDto[] | null;

  @TransformList('response')
  response_transforms?: ProxyTransformItemDto[] | null;

  @ApiPropertyOptional({ type: IdRefDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  application?: IdRefDto | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  @IsOptional()
  @IsObject()
  @AsSent()
  configuration?: Record<string, unknown> | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsBoolean()
  require_auth?: boolean | null;

  @ApiPropertyOptional({ nullable: true })
  @IsOptional()
  @IsBoolean()
  disable_detokenization?: boolean | null;
}

export class ListProxiesQueryDto extends IdAndNameQueryDto {}

export class ProxyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ description: 'Routes requests to this proxy (BT-PROXY-KEY).' }) key: string;
  @ApiProperty() name: string;
  @ApiProperty() destination_url: string;
  @ApiPropertyOptional({ type: ProxyTransformDto, nullable: true })
  request_transform: ProxyTransformDto | null;
  @ApiPropertyOptional({ type: ProxyTransformDto, nullable: true })
  response_transform: ProxyTransformDto | null;
  @ApiPropertyOptional({ type: [ProxyTransformItemDto], nullable: true })
  request_transforms: ProxyTransformItemDto[] | null;
  @ApiPropertyOptional({ type: [ProxyTransformItemDto], nullable: true })
  response_transforms: ProxyTransformItemDto[] | null;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) application_id: string | null;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  configuration: Record<string, string> | null;
  @ApiProperty() require_auth: boolean;
  @ApiProperty() disable_detokenization: boolean;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class ProxyPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [ProxyDto] }) data: ProxyDto[];
}
