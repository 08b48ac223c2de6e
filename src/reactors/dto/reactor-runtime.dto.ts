import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The hosted vault's runtime images; both run here in the same isolated-vm sandbox. */
export const RUNTIME_IMAGES = ['node-bt', 'node22'] as const;
export const DEFAULT_RUNTIME_IMAGE = 'node-bt';

/** Documents `runtime`; reactor-rules.ts checks it (the same rules for a body and a merge-patched one). */
export class ReactorRuntimeDto {
  @ApiPropertyOptional({ enum: RUNTIME_IMAGES, default: DEFAULT_RUNTIME_IMAGE })
  image?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { '@basis-theory/basis-theory-reactor-formulas-sdk-js': '*' },
    description:
      'Modules the code requires, by name and version. Only modules the sandbox provides are accepted ' +
      '(no npm package is installed); the sandbox serves its own version of each.',
  })
  dependencies?: Record<string, unknown>;

  @ApiPropertyOptional({
    minimum: 1,
    example: 5,
    description: 'Seconds a run may take; at most the sandbox limit (SANDBOX_TIMEOUT_MS).',
  })
  timeout?: number;
}

export class ReactorRuntimeViewDto {
  @ApiProperty({ enum: RUNTIME_IMAGES }) image: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } })
  dependencies: Record<string, string>;
  @ApiPropertyOptional({ nullable: true, description: 'Seconds; null: the sandbox limit.' })
  timeout: number | null;
}
