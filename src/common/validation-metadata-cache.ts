import { getMetadataStorage } from 'class-validator';

type Storage = ReturnType<typeof getMetadataStorage>;
type Lookup = Storage['getTargetValidationMetadatas'];
type Rules = ReturnType<Lookup>;
type Grouped = ReturnType<Storage['groupByPropertyName']>;

const INSTALLED = Symbol('validation metadata cache');

/**
 * class-validator looks up a DTO class's rules on every validation: it walks every class it knows (for
 * inherited rules), filters their rules and groups them by property, a cost on every request body that grows
 * with the number of DTO classes. The rules only change when a decorated class is loaded, so this keeps each
 * lookup and its grouping per class and options, and forgets them all whenever a rule is added. The cached
 * arrays are read, never changed, by class-validator's executor.
 */
export function cacheValidationMetadata(storage: Storage = getMetadataStorage()): void {
  const marked = storage as Storage & { [INSTALLED]?: true };
  if (marked[INSTALLED]) {
    return;
  }
  marked[INSTALLED] = true;
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  let rules = new WeakMap<object, Map<string, Rules>>();
  let grouped = new WeakMap<Rules, Grouped>();

  const forget = <A extends unknown[]>(add: (...args: A) => void) => {
    return (...args: A): void => {
      rules = new WeakMap();
      grouped = new WeakMap();
      add(...args);
    };
  };
  storage.addValidationMetadata = forget(storage.addValidationMetadata.bind(storage));
  storage.addConstraintMetadata = forget(storage.addConstraintMetadata.bind(storage));

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = JSON.stringify([schema, always, strictGroups, groups ?? null]);
    let byOptions = rules.get(target);
    if (byOptions === undefined) {
      byOptions = new Map();
      rules.set(target, byOptions);
    }
    let found = byOptions.get(key);
    if (found === undefined) {
      found = lookup(target, schema, always, strictGroups, groups);
      byOptions.set(key, found);
    }
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let found = grouped.get(metadata);
    if (found === undefined) {
      found = group(metadata);
      grouped.set(metadata, found);
    }
    return found;
  };
}
