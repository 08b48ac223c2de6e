import { TestHttpsServer } from '../support/https-test-server';
import { forbiddenConnector } from '../support/outbound';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

/**
 * Outbound HTTP from reactor code (fetch, axios, node-fetch) against a real HTTPS server on 127.0.0.1: the
 * host makes each call through the same guarded client as the proxy, with per-run caps.
 */
describe('fetch from reactor code', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server((req, res, body) => {
      const status = Number(/status=(\d+)/.exec(req.url ?? '')?.[1] ?? 200);
      const size = Number(/size=(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
      if (req.url?.startsWith('/redirect')) {
        res.writeHead(302, { location: 'https://127.0.0.1/admin' });
        res.end();
        return;
      }
      res.writeHead(status, {
        'content-type': 'application/json',
        'x-seen-auth': req.headers.authorization ?? '',
      });
      res.end(
        size > 0
          ? JSON.stringify({ pad: 'x'.repeat(size) })
          : JSON.stringify({ method: req.method, path: req.url, body: body.toString('utf8') }),
      );
    });
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => fx.close());

  async function react(code: string, args: Record<string, unknown> = {}, parameters: object[] = []) {
    const { reactorId } = await newReactor(fx.ctx, tenant, { code, request_parameters: parameters });
    return reactorsApi(fx.ctx, tenant).react(reactorId, { args }, caller.key);
  }

  it('charges a processor with fetch: the detokenized card number reaches the server', async () => {
    const data = cardData();
    const card = await caller.api.create({ type: 'card', data });
    const code = `module.exports = async function (req) {
      const res = await fetch(req.args.url + '/charges', {
        method: 'POST',
        headers: { Authorization: 'Bearer sk_test' },
        body: { number: req.args.card.number, amount: 1000 },
      });
      return { raw: { ok: res.ok, status: res.status, auth: res.headers.get('X-Seen-Auth'), echo: await res.json() } };
    };`;
    const res = await react(code, { url: fx.url(echo), card: `{{ ${card.body.id} }}` }, [
      { name: 'url', type: 'string' },
      { name: 'card.number', type: 'string' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({
      ok: true,
      status: 200,
      auth: 'Bearer sk_test',
      echo: { method: 'POST', path: '/charges', body: JSON.stringify({ number: data.number, amount: 1000 }) },
    });
  });

  it("posts JSON with require('axios') and rejects a 402 like axios", async () => {
    const code = `const axios = require('axios');
    module.exports = async function (req) {
      const client = axios.create({ baseURL: req.args.url, headers: { 'X-Client': 'vault' } });
      const ok = await client.post('/pay', { amount: 5 }, { params: { mode: 'test' } });
      let failure = null;
      try {
        await axios.get(req.args.url + '/decline?status=402');
      } catch (err) {
        failure = { isAxiosError: err.isAxiosError, status: err.response.status, message: err.message };
      }
      return { raw: { status: ok.status, data: ok.data, failure } };
    };`;
    const res = await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({
      status: 200,
      data: { method: 'POST', path: '/pay?mode=test', body: '{"amount":5}' },
      failure: { isAxiosError: true, status: 402, message: 'Request failed with status code 402' },
    });
  });

  it("works through require('node-fetch')", async () => {
    const code = `const fetch = require('node-fetch');
    module.exports = async function (req) {
      const res = await fetch(req.args.url + '/nf', { method: 'PUT', body: 'plain' });
      return { raw: await res.json() };
    };`;
    const res = await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    expect(res.body.raw).toEqual({ method: 'PUT', path: '/nf', body: 'plain' });
  });

  it('returns a redirect to the code instead of following it', async () => {
    const before = echo.connections;
    const code = `module.exports = async function (req) {
      const res = await fetch(req.args.url + '/redirect');
      return { raw: { status: res.status, location: res.headers.get('location') } };
    };`;
    const res = await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    expect(res.body.raw).toEqual({ status: 302, location: 'https://127.0.0.1/admin' });
    expect(echo.connections - before).toBeLessThanOrEqual(1);
  });

  it('refuses http and IP destinations with a catchable 400 error', async () => {
    const code = `module.exports = async function (req) {
      const out = [];
      for (const url of req.args.urls.split('|')) {
        try {
          await fetch(url);
          out.push('reached');
        } catch (err) {
          out.push(err.status);
        }
      }
      return { raw: out };
    };`;
    const before = echo.connections;
    const urls = [
      fx.url(echo).replace('https:', 'http:'),
      `https://127.0.0.1:${echo.port}/`,
      `https://[::1]:${echo.port}/`,
      `https://localhost:${echo.port}/`,
    ];
    const split = await react(code, { urls: urls.join('|') }, [{ name: 'urls', type: 'string' }]);
    expect(split.body.raw).toEqual([400, 400, 400, 400]);
    expect(echo.connections).toBe(before);
  });

  it('caps the calls of one run at 20', async () => {
    const code = `module.exports = async function (req) {
      const statuses = [];
      for (let i = 0; i < 21; i++) {
        try {
          statuses.push((await fetch(req.args.url + '/n' + i)).status);
        } catch (err) {
          statuses.push(err.status);
        }
      }
      return { raw: statuses };
    };`;
    const res = await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    expect(res.body.raw).toEqual([...Array<number>(20).fill(200), 429]);
  });

  it('caps the response bytes of one run at 5 MB', async () => {
    const code = `module.exports = async function (req) {
      const out = [];
      for (let i = 0; i < 7; i++) {
        try {
          out.push((await (await fetch(req.args.url + '/big?size=900000')).text()).length);
        } catch (err) {
          out.push(err.status);
        }
      }
      return { raw: out };
    };`;
    const res = await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    const raw = res.body.raw as number[];
    expect(raw.slice(0, 5)).toEqual(Array<number>(5).fill(900_010));
    expect(raw.slice(5)).toEqual([502, 502]);
  });

  it('logs no URL, header or body of a fetch', async () => {
    const code = `module.exports = async function (req) {
      await fetch(req.args.url + '/secret-path-xyz', { method: 'POST', headers: { authorization: 'Bearer log-secret' }, body: 'body-secret' });
      return { raw: null };
    };`;
    await react(code, { url: fx.url(echo) }, [{ name: 'url', type: 'string' }]);
    const logs = fx.ctx.logs.join('\n');
    for (const secret of ['secret-path-xyz', 'log-secret', 'body-secret']) {
      expect(logs).not.toContain(secret);
    }
  });
});

describe('fetch from reactor code to private and metadata addresses (decided, never connected)', () => {
  const connector = forbiddenConnector();
  let fx: ProxyFixture;
  let tenant: TestTenant;

  beforeAll(async () => {
    fx = await proxyFixture({
      allowLoopback: false,
      connector,
      names: {
        'ten.test': '10.0.0.1',
        'metadata.test': '169.254.169.254',
        'ula.test': 'fd00::1',
        'loopback.test': '127.0.0.1',
      },
    });
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('refuses each with a catchable 400 and never calls the connector', async () => {
    const code = `module.exports = async function () {
      const out = [];
      for (const url of ['https://ten.test/', 'https://metadata.test/latest/meta-data/', 'https://ula.test/']) {
        try {
          await fetch(url);
          out.push('reached');
        } catch (err) {
          out.push(err.status);
        }
      }
      return { raw: out };
    };`;
    const { reactorId } = await newReactor(fx.ctx, tenant, { code, request_parameters: [] });
    const caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
    const res = await reactorsApi(fx.ctx, tenant).react(reactorId, { args: {} }, caller.key);
    expect(res.body.raw).toEqual([400, 400, 400]);
    expect(connector).not.toHaveBeenCalled();
  });

  it('cannot tell a name resolving to 10.x from one resolving to loopback or not resolving at all', async () => {
    const code = `module.exports = async function () {
      const out = [];
      for (const name of ['ten.test', 'loopback.test', 'does-not-resolve.test']) {
        try {
          await fetch('https://' + name + '/');
          out.push('reached');
        } catch (err) {
          out.push(JSON.stringify([err.status, err.message]));
        }
      }
      return { raw: out };
    };`;
    const { reactorId } = await newReactor(fx.ctx, tenant, { code, request_parameters: [] });
    const caller = await tokenApp(fx.ctx, tenant, [], ['token:use']);
    const res = await reactorsApi(fx.ctx, tenant).react(reactorId, { args: {} }, caller.key);
    const answer = JSON.stringify([
      400,
      'The destination is not allowed: its host name does not resolve to a public address.',
    ]);
    expect(res.body.raw).toEqual([answer, answer, answer]);
    expect(connector).not.toHaveBeenCalled();
  });
});
