import { setAtPath } from './set-at-path';

describe('setAtPath', () => {
  it('sets a nested value, making objects on the way and replacing a non-object in the way', () => {
    const target: Record<string, unknown> = { a: 1, keep: true };
    setAtPath(target, ['a', 'b', 'c'], 'x');
    expect(target).toEqual({ a: { b: { c: 'x' } }, keep: true });
  });

  it('treats __proto__ as a name, never the prototype', () => {
    const target: Record<string, unknown> = {};
    setAtPath(target, ['__proto__', 'polluted'], 'yes');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(target)).toBe('{"__proto__":{"polluted":"yes"}}');
  });
});
