import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MetricsService } from '../../src/metrics/metrics.service';
import { TestContext } from '../support/test-app';

/** deploy/monitoring: the alert rules and the dashboard may only name series the vault serves. */
const KIT = join(__dirname, '../../deploy/monitoring');
const read = (name: string): string => readFileSync(join(KIT, name), 'utf8');
const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_count', '_sum'],
  summary: ['_count', '_sum'],
};

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string }[];
}

describe('monitoring kit', () => {
  let ctx: TestContext;
  let served: Set<string>;
  /** The registry's own series (not the process defaults), by base name. */
  let own: string[];

  beforeAll(async () => {
    ctx = await TestContext.create();
    served = new Set<string>();
    const metrics = await ctx.get(MetricsService).registry.getMetricsAsJSON();
    own = metrics.map((m) => m.name).filter((name) => !/^token_vault_(process|nodejs)_/.test(name));
    for (const metric of metrics) {
      served.add(metric.name);
      for (const suffix of SUFFIXES[String(metric.type)] ?? []) {
        served.add(metric.name + suffix);
      }
    }
  });
  afterAll(() => ctx.close());

  const namesIn = (text: string): string[] => [...new Set(text.match(/\btoken_vault_[a-z0-9_]+/g) ?? [])];

  it('the registry has what the kit reads (and the check itself sees a name that is not there)', () => {
    expect(served.has('token_vault_http_request_duration_seconds_bucket')).toBe(true);
    expect(served.has('token_vault_build_info')).toBe(true);
    expect(served.has('token_vault_http_requests_total')).toBe(false);
  });

  it.each(['alerts.yml', 'dashboard.json'])('%s names only series in the registry', (file) => {
    const names = namesIn(read(file));
    expect(names.length).toBeGreaterThan(10);
    expect(names.filter((name) => !served.has(name))).toEqual([]);
  });

  it('the dashboard is JSON whose panels each query something, with unique ids', () => {
    const dashboard = JSON.parse(read('dashboard.json')) as { uid: string; panels: Panel[] };
    expect(dashboard.uid).toBe('token-vault');
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const queries = dashboard.panels.filter((p) => p.type !== 'row').map((p) => p.targets ?? []);
    expect(
      queries.filter(
        (targets) =>
          targets.length === 0 ||
          targets.some((t) => namesIn(t.expr).length === 0 && !t.expr.startsWith('up{')),
      ),
    ).toEqual([]);
    // Every series the vault defines itself (the process defaults aside) has a panel.
    const used = new Set(
      queries.flat().flatMap((t) => namesIn(t.expr).map((n) => n.replace(/_(bucket|count)$/, ''))),
    );
    expect(own.filter((name) => !used.has(name))).toEqual([]);
  });

  it('every alert has its promtool test file', () => {
    const alerts = [...read('alerts.yml').matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]);
    expect(alerts.length).toBeGreaterThan(10);
    const tests = readdirSync(join(KIT, 'tests')).map((file) => read(join('tests', file)));
    for (const alert of alerts) {
      const files = tests.filter((text) => text.includes(`alertname: ${alert}\n`));
      expect({ alert, files: files.length }).toEqual({ alert, files: 1 });
      // One case where it fires and one where it stays quiet.
      expect(files[0]).toMatch(/exp_alerts:\n\s+- exp_labels/);
      expect(files[0]).toMatch(/exp_alerts: \[\]/);
    }
  });
});
