import { ExpressionEngine } from '../expressions';
import { defaultsFor } from './rules/token-types';
import { stringifiedLeaf } from './token-builder.service';

describe('stringifiedLeaf', () => {
  const engine = new ExpressionEngine();
  const expression = defaultsFor('token').fingerprintExpression;

  it.each([
    'leaf',
    '',
    'quote " backslash \\ slash /',
    'line\nbreak\ttab\u0001\u001f',
    'ünïcødé 漢字 😀',
    '{{ data }}',
    '4111111111111111',
    0,
    -0,
    12,
    -3.5,
    1e21,
    2 ** 53 + 2,
    0.1 + 0.2,
    true,
    false,
  ])('is what the engine renders for %p', (data) => {
    expect(stringifiedLeaf(expression, data)).toBe(engine.renderString(expression, { data, metadata: {} }));
  });

  it('leaves other expressions and data that is not a primitive to the engine', () => {
    expect(stringifiedLeaf('{{ data }}', 'leaf')).toBeUndefined();
    expect(stringifiedLeaf(defaultsFor('card').fingerprintExpression, 'leaf')).toBeUndefined();
    expect(stringifiedLeaf(expression, { a: 1 })).toBeUndefined();
    expect(stringifiedLeaf(expression, ['a'])).toBeUndefined();
    expect(stringifiedLeaf(expression, null)).toBeUndefined();
  });
});
