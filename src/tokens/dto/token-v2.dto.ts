import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/pagination';
import { TokenDto } from './token.dto';

const ToSize = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value,
  );

/** `start` (the cursor a previous page gave as pagination.next) and `size` of the v2 lists. */
export class CursorQueryDto {
  @ApiPropertyOptional({ description: 'pagination.next of the previous page; absent for the first page.' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  start?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @ValidateIf((_, value: unknown) => value !== undefined)
  @ToSize()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  size: number = DEFAULT_PAGE_SIZE;
}

export class ListTokensV2QueryDto extends CursorQueryDto {
  @ApiPropertyOptional({ enum: ['token', 'card', 'bank'] })
  @IsOptional()
  @IsIn(['token', 'card', 'bank'])
  type?: string;

  @ApiPropertyOptional({ example: '/pci/', description: 'Tokens in this container or below it.' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  container?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(200)
  fingerprint?: string;

  @ApiPropertyOptional({
    example: '{"customer":"acme"}',
    description: 'A JSON object of metadata values the tokens must all have (case-insensitive).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(10000)
  metadata?: string;
}

export class SearchTokensV2Dto extends CursorQueryDto {
  @ApiProperty({
    example: 'data:4242424242424242 AND metadata.customer:acme',
    description:
      'The v1 search language: data:, id:, type:, metadata.<key>: terms, ANDed; absent: every token.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  query?: string;
}

export class CursorPaginationDto {
  @ApiProperty() page_size: number;
  @ApiPropertyOptional({
    nullable: true,
    description: 'Pass as `start` for the next page; null on the last.',
  })
  next: string | null;
}

export class TokenCursorPageDto {
  @ApiProperty({ type: CursorPaginationDto }) pagination: CursorPaginationDto;
  @ApiProperty({ type: [TokenDto] }) data: TokenDto[];
}
