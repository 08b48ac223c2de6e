import { nestedDeeperThan } from './nesting';

const arrays = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}1${']'.repeat(levels)}`);
const objects = (levels: number): unknown => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);

describe('nestedDeeperThan', () => {
  it.each([
    ['arrays', arrays],
    ['objects', objects],
  ])('counts levels of %s: the limit passes, one more does not', (_label, make) => {
    expect(nestedDeeperThan(make(64), 64)).toBe(false);
    expect(nestedDeeperThan(make(65), 64)).toBe(true);
    expect(nestedDeeperThan(make(1), 0)).toBe(true);
    expect(nestedDeeperThan('text', 0)).toBe(false);
  });

  it('finds the one deep member among many shallow ones, in objects and arrays alike', () => {
    const wide = { many: Array.from({ length: 1000 }, (_, i) => ({ i })), last: [{ deep: arrays(70) }] };
    expect(nestedDeeperThan(wide, 64)).toBe(true);
    expect(nestedDeeperThan({ ...wide, last: null }, 64)).toBe(false);
  });

  it('stops at the limit on a value nested far past the stack', () => {
    expect(nestedDeeperThan(arrays(200_000), 64)).toBe(true);
  });
});
