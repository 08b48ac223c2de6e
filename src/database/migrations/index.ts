import { Foundation1763769600000 } from './1763769600000-foundation';

/** Every migration, in order. Listed by class so the same list works from TypeScript (tests) and dist. */
export const MIGRATIONS = [Foundation1763769600000];
