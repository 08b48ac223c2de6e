import { newReactor, ReactorKind, reactorRunning, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const TIMEOUT_MS = 1500;
/** The deadline plus time to kill and report; generous because CI machines are busy. */
const BOUND_MS = TIMEOUT_MS + 4000;

/** Resource exhaustion attempts: each must end with an error within the deadline. */
const EXHAUSTION: [string, string][] = [
  ['infinite loop', 'while (true) {}'],
  ['a promise that never settles', 'await new Promise(() => {});'],
  [
    'microtask flood',
    'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});',
  ],
  ['2 GB allocation', 'const big = new Array(2 * 1024 * 1024 * 1024).fill(1); return { raw: big.length };'],
  [
    '2 GB array buffer',
    'const buffer = new ArrayBuffer(2 * 1024 * 1024 * 1024); return { raw: buffer.byteLength };',
  ],
  ['deep recursion', 'const down = (n) => down(n + 1) + 1; return { raw: down(0) };'],
  ['100 MB string', "const s = 'x'.repeat(100 * 1024 * 1024); return { raw: s };"],
  [
    'fork-bomb of promises',
    'const bomb = () => { Promise.resolve().then(bomb); Promise.resolve().then(bomb); }; bomb(); await new Promise(() => {});',
  ],
  ['growing heap', 'const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length));'],
];

describe.each<ReactorKind>(['formula', 'code'])(
  'sandbox resource exhaustion (through a %s reactor)',
  (kind) => {
    let ctx: TestContext;
    let tenant: TestTenant;
    let key: string;
    let healthyId: string;

    beforeAll(async () => {
      ctx = await TestContext.create({
        env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: String(TIMEOUT_MS), SANDBOX_MEMORY_MB: '64' },
      });
      tenant = await ctx.newTenant('Acme');
      key = (await tokenApp(ctx, tenant, [], ['token:use'])).key;
      healthyId = (
        await newReactor(ctx, tenant, {
          code: 'module.exports = async (req) => ({ raw: { ok: true } });',
          request_parameters: [],
        })
      ).reactorId;
    });
    afterAll(() => ctx.close());

    it.each(EXHAUSTION)(
      'ends %s with an error in time, serves others meanwhile, then recovers',
      async (_name, body) => {
        const api = reactorsApi(ctx, tenant);
        const reactorId = await reactorRunning(
          ctx,
          tenant,
          kind,
          `module.exports = async function (req) { ${body} };`,
        );
        const started = Date.now();
        const bad = api.react(reactorId, {}, key).then((res) => ({ res, elapsed: Date.now() - started }));
        // Meanwhile: another route, and another reaction on the second worker.
        const [health, other] = await Promise.all([ctx.http.get('/health'), api.react(healthyId, {}, key)]);
        expect(health.status).toBe(200);
        expect({ status: other.status, body: other.body }).toMatchObject({ status: 200 });
        const { res, elapsed } = await bad;
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.body).toMatchObject({ status: res.status, detail: expect.any(String) });
        expect(elapsed).toBeLessThan(BOUND_MS);
        const next = await api.react(healthyId, {}, key);
        expect({ status: next.status, body: next.body }).toMatchObject({ status: 200 });
        expect(next.body.raw).toEqual({ ok: true });
      },
    );
  },
);
