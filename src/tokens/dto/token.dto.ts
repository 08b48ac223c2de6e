import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { ToArray } from '../../common/query';
import { AsSent, HandValidated, validatePlain } from '../../common/validation';
import { CLASSIFICATIONS, IMPACT_LEVELS, RESTRICTION_POLICIES } from '../rules/privacy';
import { TOKEN_TYPES } from '../rules/token-types';

const anyJson = {
  oneOf: [
    { type: 'object' },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
};

const PRIVACY_DESCRIPTION =
  "The hosted vault's older placement, still sent by its SDKs (accepted on input only): classification and " +
  'impact_level name the container /<classification>/<impact_level>/ (not with `containers`); ' +
  'restriction_policy `redact` removes the mask, so a reader whose access rule says mask gets no data.';

/** Documents `privacy`; readPrivacy (rules/privacy.ts) validates it. */
export class PrivacyDto {
  @ApiPropertyOptional({ enum: CLASSIFICATIONS, description: 'On create only.' }) classification?: string;
  @ApiPropertyOptional({ enum: IMPACT_LEVELS }) impact_level?: string;
  @ApiPropertyOptional({ enum: RESTRICTION_POLICIES }) restriction_policy?: string;
}

/**
 * Documents the create body for OpenAPI and lets its members through the global pipe; it validates
 * nothing itself. readCreateRequest (token-fields.ts) validates every create body, from POST /tokens and
 * from the definitions inside POST /tokenize alike, so the two cannot drift apart.
 */
@HandValidated()
export class CreateTokenDto {
  @ApiPropertyOptional({
    description: 'Custom id (3-400 characters) or an alias expression; a UUID when absent.',
  })
  @Allow()
  id?: string;

  @ApiPropertyOptional({ enum: TOKEN_TYPES, description: 'Required unless `token_intent_id` is sent.' })
  @Allow()
  type: string;

  @ApiPropertyOptional({
    ...anyJson,
    description:
      'The sensitive data. Card: number, expiration_month, expiration_year, cvc. Bank: routing_number, account_number. Required unless `token_intent_id` is sent.',
  })
  @AsSent()
  @Allow()
  data: unknown;

  @ApiPropertyOptional({
    description:
      'Instead of `data`: the data as a JWE compact string a browser made with a client encryption key ' +
      '(POST /keys; alg ECDH-ES, enc A256GCM, kid = key_id), its plaintext the JSON of `data`.',
  })
  @Allow()
  encrypted?: string;

  @ApiPropertyOptional({
    ...anyJson,
    nullable: true,
    description: 'Mask expression(s), e.g. "{{ data | reveal_last: 4 }}".',
  })
  @Allow()
  @AsSent()
  mask?: unknown;

  @ApiPropertyOptional({ type: [String], example: ['/pci/high/'] })
  @Allow()
  containers?: unknown[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  @AsSent()
  @Allow()
  metadata?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: [String], nullable: true, example: ['{{ data.number | last4 }}'] })
  @Allow()
  search_indexes?: unknown[] | null;

  @ApiPropertyOptional({ example: '{{ data.number }}' })
  @Allow()
  fingerprint_expression?: string;

  @ApiPropertyOptional({ type: Boolean, nullable: true, example: false })
  @Allow()
  deduplicate_token?: boolean | null;

  @ApiPropertyOptional({
    nullable: true,
    example: '2030-01-31T00:00:00+00:00',
    description: 'ISO 8601 date-time (UTC without offset) or M/D/YYYY.',
  })
  @Allow()
  expires_at?: string | null;

  @ApiPropertyOptional({ type: () => PrivacyDto, nullable: true, description: PRIVACY_DESCRIPTION })
  @Allow()
  privacy?: PrivacyDto | null;

  @ApiPropertyOptional({
    format: 'uuid',
    description:
      'Converts this token intent (its type and data) into the token, once; not with type or data.',
  })
  @Allow()
  token_intent_id?: string;
}

/** PATCH body (application/merge-patch+json): data, mask and metadata merge; the rest replace (applyPatch). */
@HandValidated()
export class UpdateTokenDto {
  @ApiPropertyOptional(anyJson) @Allow() @AsSent() data?: unknown;
  @ApiPropertyOptional({ ...anyJson, nullable: true }) @Allow() @AsSent() mask?: unknown;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    nullable: true,
  })
  @Allow()
  @AsSent()
  metadata?: unknown;
  @ApiPropertyOptional({ type: [String] }) @Allow() containers?: unknown;
  @ApiPropertyOptional({ type: [String], nullable: true }) @Allow() search_indexes?: unknown;
  @ApiPropertyOptional({ type: String, nullable: true }) @Allow() fingerprint_expression?: unknown;
  @ApiPropertyOptional({ type: Boolean, nullable: true }) @Allow() deduplicate_token?: unknown;
  @ApiPropertyOptional({ nullable: true }) @Allow() expires_at?: unknown;
  @ApiPropertyOptional({ type: () => PrivacyDto, nullable: true, description: PRIVACY_DESCRIPTION })
  @Allow()
  privacy?: unknown;
}

export class ListTokensQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: [String], description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsString({ each: true })
  id?: string[];

  @ApiPropertyOptional({ enum: TOKEN_TYPES, isArray: true, description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsIn(TOKEN_TYPES, { each: true })
  type?: string[];
}

/**
 * GET /tokens's query (the metadata filters already split off). With nothing else given it is the defaults,
 * which validate (token.dto.spec.ts): a list by metadata alone skips class-validator's walk of every field.
 */
export function listTokensQuery(plain: Record<string, unknown>): ListTokensQueryDto {
  return Object.keys(plain).length === 0
    ? new ListTokensQueryDto()
    : validatePlain(ListTokensQueryDto, plain);
}

export class TokenExtrasDto {
  @ApiPropertyOptional() deduplicated?: boolean;
}

export class TokenDto {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ enum: TOKEN_TYPES }) type: string;
  @ApiPropertyOptional({
    ...anyJson,
    description: "Per the caller's access transform: raw, masked or absent.",
  })
  data?: unknown;
  @ApiPropertyOptional({ ...anyJson, description: 'The evaluated mask.' }) mask?: unknown;
  @ApiPropertyOptional() fingerprint?: string | null;
  @ApiPropertyOptional() fingerprint_expression?: string | null;
  @ApiProperty({ type: [String] }) containers: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true })
  metadata?: Record<string, string> | null;
  @ApiPropertyOptional({ type: [String], nullable: true }) search_indexes?: string[] | null;
  @ApiPropertyOptional({ nullable: true }) deduplicate_token?: boolean | null;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by?: string | null;
  @ApiPropertyOptional() created_at?: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by?: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at?: string | null;
  @ApiPropertyOptional({ nullable: true }) expires_at?: string | null;
  @ApiPropertyOptional({ type: TokenExtrasDto }) _extras?: TokenExtrasDto;
}

export class TokenPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [TokenDto] }) data: TokenDto[];
}

export class SearchTokensDto extends PageQueryDto {
  @ApiProperty({
    example: 'data:4242424242424242 AND metadata.customer:acme',
    description:
      'Terms data:<indexed value>, id:<id>, type:<type>, metadata.<key>:<value>, ANDed; quote values with spaces.',
  })
  @IsString()
  @MaxLength(2000)
  query: string;
}
