import { ApiError } from '../common/api-error';
import { parseSearchQuery } from './search-query';

describe('parseSearchQuery', () => {
  it('reads every term kind and ANDs them', () => {
    expect(parseSearchQuery('data:4242 AND id:abc type:card metadata.Customer:"ACME Corp"')).toEqual({
      data: ['4242'],
      ids: ['abc'],
      types: ['card'],
      metadata: { Customer: 'acme corp' },
    });
  });

  it('unescapes quoted values', () => {
    expect(parseSearchQuery('data:"a \\"b\\" c"').data).toEqual(['a "b" c']);
  });

  it.each(['', '   ', 'foo:bar', 'data', 'data:"unterminated', 'metadata.:x', `${'data:x '.repeat(21)}`])(
    'rejects %j',
    (query) => {
      expect(() => parseSearchQuery(query)).toThrow(ApiError);
    },
  );
});
