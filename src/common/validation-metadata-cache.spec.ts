import { getMetadataStorage, IsInt, IsString, validateSync } from 'class-validator';
import { cacheValidationMetadata } from './validation-metadata-cache';

class Base {
  @IsString()
  name!: unknown;
}

class Derived extends Base {
  @IsInt()
  count!: unknown;
}

function problems(target: object): string[] {
  return validateSync(target, { whitelist: true, forbidNonWhitelisted: true }).map(
    (e) => `${e.property}: ${Object.keys(e.constraints ?? {}).join(',')}`,
  );
}

describe('cacheValidationMetadata', () => {
  const storage = getMetadataStorage();
  const uncached = storage.getTargetValidationMetadatas.bind(storage);
  const before = uncached(Derived, '', false, false);
  const errorsBefore = problems(Object.assign(new Derived(), { name: 1, count: 'x', extra: true }));

  beforeAll(() => cacheValidationMetadata());

  it('finds the same rules, inherited ones included, and keeps them between calls', () => {
    const first = storage.getTargetValidationMetadatas(Derived, '', false, false);
    expect(first).toEqual(before);
    expect(first.map((m) => m.propertyName).sort()).toEqual(['count', 'name']);
    expect(storage.getTargetValidationMetadatas(Derived, '', false, false)).toBe(first);
    expect(storage.groupByPropertyName(first)).toBe(storage.groupByPropertyName(first));
    // Other options are another lookup.
    expect(storage.getTargetValidationMetadatas(Derived, '', false, true, ['g'])).not.toBe(first);
  });

  it('validates as before', () => {
    expect(problems(Object.assign(new Derived(), { name: 1, count: 'x', extra: true }))).toEqual(
      errorsBefore,
    );
    expect(errorsBefore).toEqual(['extra: whitelistValidation', 'count: isInt', 'name: isString']);
    expect(problems(Object.assign(new Derived(), { name: 'a', count: 2 }))).toEqual([]);
  });

  it('sees rules added after it was installed, on new and on already looked-up classes', () => {
    class Later {
      @IsInt()
      n!: unknown;
    }
    expect(problems(Object.assign(new Later(), { n: 'x' }))).toEqual(['n: isInt']);
    IsString()(Derived.prototype, 'label');
    expect(problems(Object.assign(new Derived(), { name: 'a', count: 2, label: 3 }))).toEqual([
      'label: isString',
    ]);
  });

  it('installs once', () => {
    const lookup = storage.getTargetValidationMetadatas;
    cacheValidationMetadata();
    expect(storage.getTargetValidationMetadatas).toBe(lookup);
  });
});
