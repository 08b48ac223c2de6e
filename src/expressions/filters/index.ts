import { randomInt } from 'node:crypto';
import { Liquid } from 'liquidjs';
import { createAliasFilters, RandomInt } from './alias.filters';
import { cardFilters } from './card.filters';
import { convertFilters } from './convert.filters';
import { encodeFilters } from './encode.filters';
import { toLiquidFilter, VaultFilter } from './filter-kit';
import { jsonFilters } from './json.filters';
import { maskFilters } from './mask.filters';

/** Every vault filter by its Liquid name. `json` replaces the standard Liquid `json` (a JSONPath here). */
export function vaultFilters(random: RandomInt = (max) => randomInt(max)): Record<string, VaultFilter> {
  return {
    ...maskFilters,
    ...jsonFilters,
    ...convertFilters,
    ...encodeFilters,
    ...cardFilters,
    ...createAliasFilters(random),
  };
}

export function registerVaultFilters(liquid: Liquid, random?: RandomInt): void {
  for (const [name, filter] of Object.entries(vaultFilters(random))) {
    liquid.registerFilter(name, toLiquidFilter(name, filter));
  }
}
