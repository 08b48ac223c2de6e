import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** A document's description (the SDK's Document): never its data, which GET /documents/{id}/data answers. */
export class DocumentDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { name: 'passport.pdf' },
    description: 'Non-sensitive key-value pairs given at upload.',
  })
  metadata: Record<string, string>;
  @ApiProperty({ example: 'application/pdf', description: 'The media type of the uploaded file part.' })
  content_type: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** The upload body as Swagger shows it: a multipart form of a file part and a JSON part. */
export class UploadDocumentDto {
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file. Its part Content-Type is kept.' })
  document: unknown;

  @ApiPropertyOptional({
    type: 'string',
    description: 'JSON text: {"metadata": {"key": "value"}} (string values, at most 100 keys).',
    example: '{"metadata":{"name":"passport.pdf"}}',
  })
  request?: string;
}
