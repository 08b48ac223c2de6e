import { mergePatch } from './merge-patch';

describe('mergePatch', () => {
  // RFC 7386 Appendix A
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('RFC 7386 example %#', (target, patch, expected) => {
    expect(mergePatch(target, patch)).toEqual(expected);
  });

  it('merges the RFC 7386 section 3 document', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = {
      title: 'Hello!',
      phoneNumber: '+01-123-456-7890',
      author: { familyName: null },
      tags: ['example'],
    };
    expect(mergePatch(target, patch)).toEqual({
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('treats a primitive or missing target as an empty object', () => {
    expect(mergePatch('text', { a: 1 })).toEqual({ a: 1 });
    expect(mergePatch(undefined, { a: { b: null, c: 2 } })).toEqual({ a: { c: 2 } });
    expect(mergePatch(null, { a: null })).toEqual({});
  });

  it('does not mutate its inputs', () => {
    const target = { a: { b: 'c', keep: [1] }, d: 1 };
    const patch = { a: { b: null, x: { y: null } }, d: null };
    const targetCopy = structuredClone(target);
    const patchCopy = structuredClone(patch);
    const result = mergePatch(target, patch);
    expect(result).toEqual({ a: { keep: [1], x: {} } });
    expect(target).toEqual(targetCopy);
    expect(patch).toEqual(patchCopy);
    expect(result).not.toBe(target);
  });

  it('keeps a "__proto__" member as data without touching the prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const result = mergePatch({}, patch) as Record<string, unknown>;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"polluted":true},"a":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const removed = mergePatch(result, JSON.parse('{"__proto__": null}')) as Record<string, unknown>;
    expect(Object.keys(removed)).toEqual(['a']);
  });

  it('does not read inherited members of the target', () => {
    expect(mergePatch({}, { toString: { a: 1 } })).toEqual({ toString: { a: 1 } });
  });
});
