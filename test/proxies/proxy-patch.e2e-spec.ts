import { expectProblem } from '../support/problems';
import { TestHttpsServer } from '../support/https-test-server';
import { createProxy, ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

const TRANSFORM = 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });';
const TAGGING =
  "module.exports = async (req) => ({ body: { ...req.args.body, tag: 'patched' }, headers: req.args.headers });";

/** PATCH /proxies/{id}, `disable_detokenization` and `request_transform.type`, as today's SDKs send them. */
describe('/proxies: merge patch, disable_detokenization and transform types', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
    caller = await tokenApp(fx.ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => fx.close());

  const patch = (id: string, value: unknown, type = 'application/merge-patch+json', key = tenant.key) =>
    fx.ctx.http
      .patch(`/proxies/${id}`)
      .set('BT-API-KEY', key)
      .set('Content-Type', type)
      .send(JSON.stringify(value));
  const create = (body: Record<string, unknown>) =>
    fx.ctx.http
      .post('/proxies')
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Proxy', destination_url: 'https://api.example.com/v1', ...body });

  it('accepts request_transform.type "code" and answers it back; other types are 400 naming "code"', async () => {
    const res = await create({
      request_transform: { type: 'code', code: TRANSFORM },
      response_transform: { code: TRANSFORM },
    });
    expect(res.status).toBe(201);
    expect(res.body.request_transform).toEqual({ type: 'code', code: TRANSFORM });
    expect(res.body.response_transform).toEqual({ type: 'code', code: TRANSFORM });
    for (const type of ['tokenize', 'mask', 'append_json']) {
      const refused = await create({ request_transform: { type, code: TRANSFORM } });
      expectProblem(refused, 400, ['request_transform.type']);
      expect(refused.body.errors['request_transform.type']).toEqual(['must be one of: code']);
    }
    expectProblem(await create({ response_transform: { type: 'append_header' } }), 400, [
      'response_transform.type',
    ]);
  });

  it('stores disable_detokenization and forwards the body as sent when it is true', async () => {
    const data = cardData();
    const card = await caller.api.create({ type: 'card', data });
    const expression = `{{ ${card.body.id as string} | json: '$.number' }}`;
    const { id, key } = await createProxy(fx.ctx, tenant, {
      destination_url: fx.url(echo),
      disable_detokenization: true,
    });
    expect((await fx.ctx.http.get(`/proxies/${id}`).set('BT-API-KEY', tenant.key)).body).toMatchObject({
      disable_detokenization: true,
    });
    const send = () =>
      fx.ctx.http
        .post('/proxy')
        .set('BT-API-KEY', caller.key)
        .set('BT-PROXY-KEY', key)
        .send({ n: expression });
    const raw = await send();
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ n: expression });
    expect((await patch(id, { disable_detokenization: false })).body.disable_detokenization).toBe(false);
    expect((await send()).body).toEqual({ n: data.number });
  });

  it('merges a patch: configuration and transforms merge, null removes, the rest replaces, the key stays', async () => {
    const app = await fx.ctx.newApplication(tenant, 'private', ['token:use']);
    const created = await create({
      request_transform: { code: TRANSFORM },
      configuration: { a: '1', b: '2' },
      application: { id: app.id },
    });
    const { id, key } = created.body as { id: string; key: string };
    const res = await patch(id, {
      name: 'Renamed',
      configuration: { b: null, c: '3' },
      request_transform: { code: TAGGING },
      response_transform: { type: 'code', code: TRANSFORM },
      require_auth: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      key,
      name: 'Renamed',
      destination_url: 'https://api.example.com/v1',
      configuration: { a: '1', c: '3' },
      request_transform: { type: 'code', code: TAGGING },
      response_transform: { type: 'code', code: TRANSFORM },
      application_id: app.id,
      require_auth: false,
      disable_detokenization: false,
      modified_by: expect.any(String),
    });
    const cleared = await patch(id, { request_transform: null, application: null, configuration: null });
    expect(cleared.body).toMatchObject({
      request_transform: null,
      response_transform: { type: 'code', code: TRANSFORM },
      application_id: null,
      configuration: null,
      name: 'Renamed',
    });
  });

  it('validates the merged proxy like a full body', async () => {
    const { id } = (await create({})).body as { id: string };
    expectProblem(await patch(id, { name: null }), 400, ['name']);
    expectProblem(await patch(id, { destination_url: null }), 400, ['destination_url']);
    expectProblem(await patch(id, { destination_url: 'http://api.example.com' }), 400, ['destination_url']);
    expectProblem(await patch(id, { request_transform: { type: 'code' } }), 400, ['request_transform.code']);
    expectProblem(await patch(id, { request_transform: { type: 'mask' } }), 400, ['request_transform.type']);
    expectProblem(await patch(id, { configuration: { n: 1 } }), 400, ['configuration.n']);
    expectProblem(await patch(id, { request_transform: { code: 'module.exports = (' } }), 422, [
      'request_transform.code',
    ]);
    expectProblem(await patch(id, { unknown: 1 }), 400);
    expectProblem(await patch(id, { name: 'x' }, 'application/json'), 415);
    expect((await fx.ctx.http.get(`/proxies/${id}`).set('BT-API-KEY', tenant.key)).body.name).toBe('Proxy');
  });

  it('answers 404 for a missing or another tenant’s proxy, and 403 without proxy:update', async () => {
    const { id } = (await create({})).body as { id: string };
    const other = await fx.ctx.newTenant('Other');
    expectProblem(await patch(id, { name: 'x' }, undefined, other.key), 404);
    expectProblem(await patch('00000000-0000-4000-8000-000000000000', { name: 'x' }), 404);
    const reader = await fx.ctx.newApplication(tenant, 'management', ['proxy:read']);
    expectProblem(await patch(id, { name: 'x' }, undefined, reader.key), 403);
  });
});
