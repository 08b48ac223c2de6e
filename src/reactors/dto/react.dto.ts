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
