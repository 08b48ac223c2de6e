import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ApplicationKeyDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiPropertyOptional({ description: 'The API key: returned only by the call that creates it.' })
  key?: string;
  @ApiProperty({
    example: '2',
    description: 'Rises with every key issued to the application (a string, as the SDKs type it).',
  })
  version: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
}
