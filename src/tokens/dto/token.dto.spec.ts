import { ApiError } from '../../common/api-error';
import { validatePlain } from '../../common/validation';
import { listTokensQuery, ListTokensQueryDto } from './token.dto';

describe('listTokensQuery', () => {
  it('is the validated defaults when nothing but metadata was asked for', () => {
    const validated = validatePlain(ListTokensQueryDto, {});
    expect(listTokensQuery({})).toEqual(validated);
    expect(listTokensQuery({})).toBeInstanceOf(ListTokensQueryDto);
  });

  it('validates anything else', () => {
    expect(listTokensQuery({ page: '2', type: 'card' })).toMatchObject({ page: 2, type: ['card'] });
    expect(() => listTokensQuery({ size: '0' })).toThrow(ApiError);
    expect(() => listTokensQuery({ unknown: 'x' })).toThrow(ApiError);
  });
});
