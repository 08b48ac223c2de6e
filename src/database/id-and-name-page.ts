import type { ObjectLiteral, Repository } from 'typeorm';
import { PageQueryDto, pageOffset } from '../common/pagination';
import { wildcardToLike } from '../common/query';

/** The filters of an id-and-name list: ids (any of them) and a name wildcard, each optional. */
export type IdAndNameFilter = PageQueryDto & { id?: string[]; name?: string };

/** Which rows a tenant's list holds: its own, or its own and those of no tenant (the official reactor formulas). */
export type Visibility = 'own' | 'own-and-unowned';

const VISIBLE: Record<Visibility, string> = {
  own: 'r.tenant_id = :tenantId',
  'own-and-unowned': '(r.tenant_id = :tenantId OR r.tenant_id IS NULL)',
};

/** One page of the rows a tenant sees filtered as IdAndNameFilter says, newest first, and the count of all matches. */
export function findIdAndNamePage<T extends ObjectLiteral>(
  repository: Repository<T>,
  tenantId: string,
  query: IdAndNameFilter,
  visible: Visibility = 'own',
): Promise<[T[], number]> {
  const builder = repository.createQueryBuilder('r').where(VISIBLE[visible], { tenantId });
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
