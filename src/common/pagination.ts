import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { ToArray } from './query';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
/** int32: larger page numbers would overflow the SQL OFFSET (a 500) and are past the end of any list anyway. */
export const MAX_PAGE = 2_147_483_647;

/**
 * A page number from a query string ("2") or a JSON body (2). Anything else is left as it is for IsInt to
 * refuse: Number() of an object calls its toString, which a hostile body can set to a non-function.
 */
const ToPageNumber = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value,
  );

/** Absent means the default; null or any other value is validated (and refused when not an integer). */
const UnlessAbsent = (): PropertyDecorator => ValidateIf((_, value: unknown) => value !== undefined);

/** `page` and `size` of every list endpoint (spec §2.6). */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE, default: 1 })
  @UnlessAbsent()
  @ToPageNumber()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @UnlessAbsent()
  @ToPageNumber()
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

/** The filters of lists whose spec reads "`id` (array), `name` (wildcard)": reactors and proxies. */
export class IdAndNameQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: [String], description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsUUID('all', { each: true })
  id?: string[];

  @ApiPropertyOptional({ description: 'Name filter: `*` matches anything; without `*`, a substring.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}
