import { ExpressionEngine } from './expression-engine';
import { EXPRESSION_LIMITS } from './expression.limits';
import { HOSTILE_TEMPLATES } from './hostile-templates';

describe('expression work limit', () => {
  const engine = new ExpressionEngine();
  const data = 'x'.repeat(100_000);

  beforeAll(() => {
    // Compile the hot paths first, so the first template is not charged the JIT's work.
    for (const template of HOSTILE_TEMPLATES) {
      expect(() => engine.renderString(template, { data })).toThrow(/takes too long to render/);
    }
  });

  it.each(HOSTILE_TEMPLATES.map((t) => [t.slice(0, 80), t]))(
    'refuses %s after a bounded amount of work',
    (_name, template) => {
      let message = '';
      try {
        engine.renderString(template, { data });
      } catch (error) {
        message = (error as Error).message;
      }
      // Refused by the step count, which bounds the work whatever the machine's load (the time it takes
      // under load is measured by BENCH_ONLY=hostile npm run bench, not here).
      expect(message).toContain(
        `takes too long to render: it exceeds ${EXPRESSION_LIMITS.work.toLocaleString('en-US')} steps`,
      );
    },
  );

  it('refuses them typed too, and still renders loops of ordinary size', () => {
    expect(() => engine.render(HOSTILE_TEMPLATES[6], {})).toThrow(/takes too long to render/);
    const list = Array.from({ length: 500 }, (_, i) => ({ n: String(i) }));
    const joined = engine.renderString('{% for item in data %}{{ item.n | last4 }},{% endfor %}', {
      data: list,
    });
    expect(joined.split(',')).toHaveLength(501);
    expect(
      engine.render('{{ data | stringify | size }}', { data: Array.from({ length: 100_000 }, () => 0) }),
    ).toBe(200_001);
  });

  it('shares one work budget between the renders of a request', () => {
    const loop = '{% for i in (1..2000) %}{% endfor %}ok';
    const outcomes = engine.withBudget(() =>
      Array.from({ length: 40 }, () => {
        try {
          return engine.renderString(loop, {});
        } catch {
          return 'refused';
        }
      }),
    );
    const rendered = outcomes.filter((o) => o === 'ok').length;
    expect(rendered).toBeGreaterThan(5);
    expect(rendered).toBeLessThan(40);
    expect(engine.renderString(loop, {})).toBe('ok');
  });
});
