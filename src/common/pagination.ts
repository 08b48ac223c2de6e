import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** int32: larger page numbers would overflow the SQL OFFSET (a 500) and are past the end of any list anyway. */
export const MAX_PAGE = 2_147_483_647;

/** `page` and `size` of every list endpoint (spec §2.6). */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  size: number = DEFAULT_PAGE_SIZE;
}

export class PaginationDto {
  @ApiProperty() total_items: number;
  @ApiProperty() page_number: number;
  @ApiProperty() page_size: number;
  @ApiProperty() total_pages: number;
}

export interface Page<T> {
  pagination: PaginationDto;
  data: T[];
}

export function pageOf<T>(data: T[], totalItems: number, query: PageQueryDto): Page<T> {
  return {
    pagination: {
      total_items: totalItems,
      page_number: query.page,
      page_size: query.size,
      total_pages: Math.ceil(totalItems / query.size),
    },
    data,
  };
}

export function pageOffset(query: PageQueryDto): number {
  return (query.page - 1) * query.size;
}
