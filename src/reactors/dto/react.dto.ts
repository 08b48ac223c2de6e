import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional } from 'class-validator';
import { AsSent } from '../../common/validation';

export class ReactRequestDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "Arguments for the formula's request parameters. `{{ <token id> }}` expressions are replaced with the tokens' data first (token:use, at most 100 tokens).",
    example: { card: '{{ 26818785-547b-4b28-b0fa-531377e99f4e }}', amount: '1999' },
  })
  @IsOptional()
  @IsObject()
  @AsSent()
  args?: Record<string, unknown>;
}

export class ReactResponseDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      "The code's `tokenize` output, tokenized as by POST /tokenize under the reactor's application.",
  })
  tokens: unknown;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: "The code's `raw` output.",
  })
  raw: unknown;
}

export class AsyncReactResponseDto {
  @ApiProperty({ format: 'uuid', description: 'The run: GET /reactors/{id}/results/{this id}.' }) id: string;
  @ApiProperty({ format: 'uuid', description: 'The same id, under the name the hosted vault’s SDKs read.' })
  asyncReactorRequestId: string;
  @ApiProperty({ enum: ['pending'] }) status: string;
}

export class ReactorResultDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) reactor_id: string;
  @ApiProperty({ enum: ['pending', 'completed', 'failed'] }) status: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'As in a synchronous react; set when completed.',
  })
  tokens: unknown;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'As in a synchronous react; set when completed.',
  })
  raw: unknown;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'When failed: the error a synchronous react would have answered (problem details, or the code’s ' +
      'CustomHttpResponseError as `{ status, headers, body }`).',
  })
  error: unknown;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ nullable: true }) completed_at: string | null;
  @ApiProperty({ description: 'The result is deleted at this time (24 hours after the request).' })
  expires_at: string;
}
