import { currentWork } from '../common/request-context';
import { ExpressionEngine } from './expression-engine';
import { jsonPathShortcut, NO_SHORTCUT } from './json-path-shortcut';

const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

const VALUES: [string, unknown][] = [
  ['a card', card],
  [
    'nested objects and arrays',
    { a: { b: [1, { c: 'x', d: null, e: [true, 2.5] }] }, 'k-1': { é: 'accent' } },
  ],
  ['an array', ['x', { y: 1 }, [null]]],
  ['a string', '4242424242424242'],
  ['a number', 42],
  ['a boolean', false],
  ['null', null],
  ['undefined', undefined],
  ['an object with an undefined member', { a: undefined, b: 1 }],
  ['an own __proto__ key', JSON.parse('{"__proto__": {"x": 1}, "constructor": "own"}') as unknown],
  ['a large string', 'x'.repeat(12_345)],
];

const CHAINS = [
  "| json: '$.number'",
  "|json:'$.number'",
  '| json: "$.expiration_month"',
  "|  json:   '$.a.b[1].c'",
  "| json: '$.a.b[1].d'",
  "| json: '$.a.b[1].e[-1]'",
  "| json: '$.a.b[5]'",
  "| json: '$.k-1.é'",
  "| json: ' $.a '",
  "| json: '$'",
  "| json: '$[0]'",
  "| json: '$[-1][0]'",
  "| json: '$.missing'",
  "| json: '$.toString'",
  "| json: '$.__proto__.x'",
  "| json: '$.constructor'",
  "| json: '$.a'",
  "| json: '$..a'",
  "| json: '$.*'",
  "| json: 'number'",
  "| json: '$['a']'",
  '| json: \'$["a"]\'',
  "| json: '$.a\\'b'",
  "| json : '$.number'",
  "| json: '$.number' | upcase",
  "| json: '$.number', '$.cvc'",
  '| json',
  '| json: 5',
  '| upcase',
  '| stringify',
];

type Outcome = { value: unknown } | { error: string; type: string };

function outcome(run: () => unknown): Outcome {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message, type: (error as Error).constructor.name };
  }
}

describe('the json filter shortcut of ExpressionEngine.renderFiltered', () => {
  const engine = new ExpressionEngine();

  describe.each(VALUES)('of %s', (_name, value) => {
    it.each(CHAINS)('gives what the engine renders for %s', (filters) => {
      const engineOutcome = outcome(() => engine.render(`{{ value ${filters} }}`, { value }));
      const fast = outcome(() => engine.renderFiltered(value, filters));
      expect(fast).toStrictEqual(engineOutcome);
      if ('value' in fast && 'value' in engineOutcome) {
        expect(JSON.stringify(fast.value)).toBe(JSON.stringify(engineOutcome.value));
      }
    });
  });

  it('answers a plain json path without the engine, and a path that matches nothing with it', () => {
    const render = jest.spyOn(engine, 'render');
    try {
      expect(engine.renderFiltered(card, "| json: '$.number'")).toBe(card.number);
      const nested = { a: [{ b: card }] };
      expect(engine.renderFiltered(nested, "| json: '$.a[0].b'")).toBe(card);
      expect(render).not.toHaveBeenCalled();
      expect(() => engine.renderFiltered(card, "| json: '$.none'")).toThrow('matched no value');
      expect(render).toHaveBeenCalledTimes(1);
    } finally {
      render.mockRestore();
    }
  });

  it('takes a shortcut only for one json filter with one quoted path that selects a value', () => {
    expect(jsonPathShortcut(card, "| json: '$.cvc'")).toBe('123');
    expect(jsonPathShortcut(card, "| json: '$.none'")).toBe(NO_SHORTCUT);
    expect(jsonPathShortcut(null, "| json: '$'")).toBe(NO_SHORTCUT);
    expect(jsonPathShortcut(card, "| json: '$.cvc' | upcase")).toBe(NO_SHORTCUT);
    expect(jsonPathShortcut(card, "| json: '$..cvc'")).toBe(NO_SHORTCUT);
  });

  it('charges the request budget what the render charges', () => {
    const used = (run: () => unknown): number =>
      engine.withBudget(() => {
        run();
        return currentWork()?.renderBudget?.remainingWork ?? NaN;
      });
    for (const [value, filters] of [
      [card, "| json: '$.number'"],
      ['y'.repeat(5_500), "| json: '$'"],
    ] as const) {
      expect(used(() => engine.renderFiltered(value, filters))).toBe(
        used(() => engine.render(`{{ value ${filters} }}`, { value })),
      );
    }
  });

  it('leaves a request whose budget is spent to the engine, which refuses it', () => {
    const refusal = (run: () => unknown): Outcome =>
      engine.withBudget(() => {
        const budget = currentWork()?.renderBudget;
        if (budget !== undefined) {
          budget.remainingWork = 0;
        }
        return outcome(run);
      });
    const fast = refusal(() => engine.renderFiltered(card, "| json: '$.number'"));
    expect(fast).toStrictEqual(
      refusal(() => engine.render("{{ value | json: '$.number' }}", { value: card })),
    );
    expect(fast).toMatchObject({ type: 'ExpressionError' });
  });
});
