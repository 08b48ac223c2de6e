import { ApiProperty } from '@nestjs/swagger';

/** GET /health: the process is up, and which version of the vault it runs. */
export class HealthDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ description: "The vault's version (package.json).", example: '0.1.0' }) version: string;
}
