import { WorkerPool } from '../../src/sandbox/worker-pool';
import { runIn, testPool } from './sandbox-harness';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";

describe('sandbox (isolated-vm in worker processes)', () => {
  let pool: WorkerPool;
  beforeAll(() => {
    pool = testPool();
  });
  afterAll(() => pool.close());

  it('runs both CommonJS export forms with args and configuration', async () => {
    const req = { args: { a: 1, s: 'x' }, configuration: { k: 'v' } };
    expect(
      await runIn(
        pool,
        'module.exports = async function (req) { return { raw: req.args, c: req.configuration }; };',
        req,
      ),
    ).toEqual({
      ok: true,
      value: { raw: { a: 1, s: 'x' }, c: { k: 'v' } },
    });
    expect(await runIn(pool, 'module.exports = async (req) => ({ raw: req.args.a + 1 });', req)).toEqual({
      ok: true,
      value: { raw: 2 },
    });
  });

  it('copies results as JSON', async () => {
    const outcome = await runIn(
      pool,
      'module.exports = async () => ({ f: () => 1, d: new Date(0), u: undefined, n: NaN, nested: [undefined] });',
    );
    expect(outcome).toEqual({ ok: true, value: { d: '1970-01-01T00:00:00.000Z', n: null, nested: [null] } });
  });

  it('gives bt null without handlers, and relays bridged calls with camelCase envelopes', async () => {
    expect(await runIn(pool, 'module.exports = async (req) => ({ bt: req.bt });')).toEqual({
      ok: true,
      value: { bt: null },
    });
    const calls: unknown[] = [];
    const outcome = await runIn(
      pool,
      `module.exports = async (req) => {
         const token = await req.bt.tokens.create({ type: 'token', data: { fooBar: 1 }, searchIndexes: ['x'] });
         return { token };
       };`,
      { args: {}, configuration: {} },
      {
        'bt.tokens.create': (args) => {
          calls.push(args);
          return Promise.resolve({ id: 't1', tenant_id: 'x', data: { foo_bar: 2 }, created_at: 'now' });
        },
      },
    );
    expect(calls).toEqual([[{ type: 'token', data: { fooBar: 1 }, search_indexes: ['x'] }]]);
    expect(outcome).toEqual({
      ok: true,
      value: { token: { id: 't1', tenantId: 'x', data: { foo_bar: 2 }, createdAt: 'now' } },
    });
  });

  it('reports SDK errors, custom responses and other throws as data', async () => {
    expect(
      await runIn(pool, `module.exports = async () => { throw new (${SDK}.BadRequestError)('nope'); };`),
    ).toEqual({
      ok: false,
      error: { kind: 'sdk', name: 'BadRequestError', errors: { error: ['nope'] } },
    });
    expect(
      await runIn(
        pool,
        `module.exports = async () => { throw new (${SDK}.CustomHttpResponseError)({ status: 418, headers: { 'X-A': 'b' }, body: { t: 1 } }); };`,
      ),
    ).toEqual({
      ok: false,
      error: { kind: 'custom_response', status: 418, headers: { 'X-A': 'b' }, body: { t: 1 } },
    });
    expect(await runIn(pool, "module.exports = async () => { throw new Error('x'); };")).toEqual({
      ok: false,
      error: { kind: 'error', message: 'x' },
    });
    expect(await runIn(pool, "module.exports = async () => { throw 'plain'; };")).toEqual({
      ok: false,
      error: { kind: 'error', message: 'plain' },
    });
  });

  it('ends an infinite loop at the deadline and keeps serving', async () => {
    const started = Date.now();
    expect(await runIn(pool, 'module.exports = async () => { while (true) {} };')).toEqual({
      ok: false,
      error: { kind: 'timeout' },
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await runIn(pool, 'module.exports = async () => 1;')).toEqual({ ok: true, value: 1 });
  });
});
