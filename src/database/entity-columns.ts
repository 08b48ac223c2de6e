import type { EntityMetadata } from 'typeorm';

/**
 * Every column of an entity as `column AS "property"` (of `alias` when given): a plain SQL row then already
 * has the entity's shape, so a hot prepared statement needs no hand-written mapping that could miss a column.
 * With `properties`, only the columns of those properties (each must exist).
 */
export function entityColumns(
  metadata: EntityMetadata,
  alias?: string,
  properties?: readonly string[],
): string {
  const prefix = alias === undefined ? '' : `${alias}.`;
  const columns =
    properties === undefined
      ? metadata.columns
      : properties.map((property) => {
          const column = metadata.columns.find((c) => c.propertyName === property);
          if (column === undefined) {
            throw new Error(`${metadata.name} has no column for ${property}`);
          }
          return column;
        });
  return columns.map((c) => `${prefix}"${c.databaseName}" AS "${c.propertyName}"`).join(', ');
}
