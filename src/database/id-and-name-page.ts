import type { ObjectLiteral, Repository } from 'typeorm';
import { IdAndNameQueryDto, pageOffset } from '../common/pagination';
import { wildcardToLike } from '../common/query';

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
