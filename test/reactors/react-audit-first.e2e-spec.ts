import { TestHttpsServer } from '../support/https-test-server';
import { expectProblem } from '../support/problems';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { ECHO_CODE, newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

/**
 * A reaction's code runs while its audit records are written, so nothing may leave before they are durable:
 * not the answer, not a failure's message, not a fetch. With the records unwritable, every reaction is a 503
 * that shows none of the data and calls nobody.
 */
describe('a reaction whose audit records cannot be written', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  let calls = 0;

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server((_req, res) => {
      calls += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => fx.close());

  it('answers 503 with no data and no call out, and reacts again once they can', async () => {
    const data = cardData();
    const card = (await caller.api.create({ type: 'card', data })).body.id as string;
    const args = { url: fx.url(echo), card: `{{ ${card} }}` };
    const fetching = `module.exports = async function (req) {
      await fetch(req.args.url + '/charges', { method: 'POST', body: { number: req.args.card.number } });
      return { raw: req.args };
    };`;
    const throwing = `module.exports = async function (req) { throw new Error('card ' + req.args.card.number); };`;
    const request_parameters = [
      { name: 'url', type: 'string' },
      { name: 'card.number', type: 'string' },
    ];
    const reactors = await Promise.all(
      [ECHO_CODE, fetching, throwing].map(
        async (code) => (await newReactor(fx.ctx, tenant, { code, request_parameters })).reactorId,
      ),
    );
    const api = reactorsApi(fx.ctx, tenant);

    await fx.ctx.dataSource.query('ALTER TABLE audit_records RENAME TO audit_records_broken');
    try {
      for (const reactorId of reactors) {
        const res = await api.react(reactorId, { args }, caller.key);
        expectProblem(res, 503);
        expect(JSON.stringify(res.body)).not.toContain(data.number.slice(-4));
      }
      expect(calls).toBe(0);
    } finally {
      await fx.ctx.dataSource.query('ALTER TABLE audit_records_broken RENAME TO audit_records');
    }

    const res = await api.react(reactors[1], { args }, caller.key);
    expect(res.status).toBe(200);
    expect(res.body.raw.card.number).toBe(data.number);
    expect(calls).toBe(1);
  });
});
