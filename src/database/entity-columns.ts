import type { EntityMetadata } from 'typeorm';

/**
 * Every column of an entity as `column AS "property"` (of `alias` when given): a plain SQL row then already
 * has the entity's shape, so a hot prepared statement needs no hand-written mapping that could miss a column.
 */
export function entityColumns(metadata: EntityMetadata, alias?: string): string {
  const prefix = alias === undefined ? '' : `${alias}.`;
  return metadata.columns.map((c) => `${prefix}"${c.databaseName}" AS "${c.propertyName}"`).join(', ');
}
