import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import type { ObjectLiteral, Repository } from 'typeorm';
import { ToArray, wildcardToLike } from './query';

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

/** One page of a tenant's rows filtered as IdAndNameQueryDto says, newest first, and the count of all matches. */
export function findIdAndNamePage<T extends ObjectLiteral>(
  repository: Repository<T>,
  tenantId: string,
  query: IdAndNameQueryDto,
): Promise<[T[], number]> {
  const builder = repository.createQueryBuilder('r').where('r.tenant_id = :tenantId', { tenantId });
  if (query.id !== undefined) {
    builder.andWhere('r.id IN (:...ids)', { ids: query.id });
  }
  if (query.name !== undefined) {
    builder.andWhere(`r.name ILIKE :name ESCAPE '\\'`, { name: wildcardToLike(query.name) });
  }
  return builder
    .orderBy('r.created_at', 'DESC')
    .addOrderBy('r.id', 'ASC')
    .skip(pageOffset(query))
    .take(query.size)
    .getManyAndCount();
}
