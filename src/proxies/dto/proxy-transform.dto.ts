import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { MAX_CODE_LENGTH } from '../../reactor-formulas/dto/reactor-formula.dto';

/** The transform types of `request_transforms` / `response_transforms`; which direction takes which: proxy-transform-rules.ts. */
export const LISTED_TRANSFORM_TYPES = [
  'code',
  'mask',
  'append_json',
  'append_text',
  'append_header',
  'tokenize',
] as const;
export type ListedTransformType = (typeof LISTED_TRANSFORM_TYPES)[number];

export const MAX_TRANSFORM_TEXT = 4096;

export class ProxyTransformOptionsDto {
  @ApiPropertyOptional({
    maxLength: MAX_TRANSFORM_TEXT,
    description:
      "`append_*`: the text added (a JSON string value, body text or a header value); `{{ transform_identifier: '<identifier>' | json: '$.id' }}` in it is a token an earlier `tokenize` of the same list created.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_TRANSFORM_TEXT)
  value?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    example: '$.meta.source',
    description:
      "`append_json`: where the value goes (`$.a.b`); `append_header`: the header name; `tokenize` (optional): where in the JSON body the created token's id replaces what was there (`$.card`).",
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  location?: string;

  @ApiPropertyOptional({
    maxLength: 100,
    example: 'cardToken',
    description:
      "`tokenize`: the name later transforms of the list use for the created token (`{{ transform_identifier: 'cardToken' | json: '$.id' }}`).",
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  identifier?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: {
      type: 'card',
      data: { number: '{{ req.card.number }}', expiration_month: '{{ req.card.month }}' },
    },
    description:
      "`tokenize`: the token to create, as a `POST /tokens` body, created with the proxy's application (it needs `token:create`). Its string values are expressions over the body: `{{ req.<path> }}` on the request side, `{{ res.<path> }}` on the response side (plain values are taken as they are).",
  })
  @IsOptional()
  @IsObject()
  token?: object;
}

/** One entry of `request_transforms` / `response_transforms`, as the hosted vault and node-sdk shape it. */
export class ProxyTransformItemDto {
  @ApiPropertyOptional({ enum: LISTED_TRANSFORM_TYPES, default: 'code' })
  @IsOptional()
  @IsIn(LISTED_TRANSFORM_TYPES, { message: `must be one of: ${LISTED_TRANSFORM_TYPES.join(', ')}` })
  type?: ListedTransformType;

  @ApiPropertyOptional({ maxLength: MAX_CODE_LENGTH, description: '`code`: as `request_transform.code`.' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code?: string;

  @ApiPropertyOptional({ enum: ['regex'], description: '`mask`: how values are found.' })
  @IsOptional()
  @IsIn(['regex'], { message: 'must be regex' })
  matcher?: string;

  @ApiPropertyOptional({
    maxLength: 1000,
    example: '"account_number":\\s*"(.*?)"',
    description: '`mask`: a JavaScript regular expression with at least one capture group.',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1000)
  expression?: string;

  @ApiPropertyOptional({
    example: '*',
    description: '`mask`: one character, repeated over each captured value.',
  })
  @IsOptional()
  @IsString()
  replacement?: string;

  @ApiPropertyOptional({ type: ProxyTransformOptionsDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ProxyTransformOptionsDto)
  options?: ProxyTransformOptionsDto;
}

/** A listed transform as stored and answered: the type always named, only the fields it uses. */
export interface StoredTransform {
  type: ListedTransformType;
  code?: string;
  matcher?: string;
  expression?: string;
  replacement?: string;
  options?: { value?: string; location?: string; identifier?: string; token?: object };
}
