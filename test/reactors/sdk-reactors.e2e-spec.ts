import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { BasisTheory } from '@basis-theory/basis-theory-js';
import type { AddressInfo } from 'node:net';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const CODE =
  'module.exports = async function (req) { return { raw: { echo: req.args.value, currency: req.configuration.currency } }; };';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Today's official SDKs, pointed at the vault, for their reactor and proxy calls (spec: issue 23). */
describe('reactors and proxies through @basis-theory/node-sdk 5.7.0 and basis-theory-js 4.30.2', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let baseUrl: string;
  let user: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '2' } });
    await ctx.vault.app.listen(0, '127.0.0.1');
    const { port } = ctx.vault.app.getHttpServer().address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${port}`;
    tenant = await ctx.newTenant('Acme');
    user = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => ctx.close());

  const node = (key: string) => new BasisTheoryClient({ apiKey: key, baseUrl, maxRetries: 0 });
  /** basis-theory-js turns any host but `localhost` into https: its clients are pointed back at plain HTTP. */
  async function js(key: string) {
    const bt = await new BasisTheory().init(key, { apiBaseUrl: baseUrl, disableTelemetry: true });
    for (const service of Object.values(bt as unknown as Record<string, unknown>)) {
      const client = (service as { client?: { defaults: { baseURL?: string } } } | null)?.client;
      if (typeof client?.defaults.baseURL === 'string') {
        client.defaults.baseURL = client.defaults.baseURL.replace(/^https:/, 'http:');
      }
    }
    return bt;
  }

  it('node-sdk: create, get, update, patch, react, react-async, results, delete a code reactor', async () => {
    const management = node(tenant.key);
    const created = await management.reactors.create({
      name: 'Echo',
      code: CODE,
      configuration: { currency: 'USD' },
      runtime: { image: 'node-bt', timeout: 5 },
    });
    expect(created).toMatchObject({
      name: 'Echo',
      code: CODE,
      state: 'active',
      configuration: { currency: 'USD' },
    });
    expect(created.runtime).toMatchObject({ image: 'node-bt', timeout: 5 });
    const id = created.id as string;
    expect((await management.reactors.get(id)).code).toBe(CODE);

    const updated = await management.reactors.update(id, {
      name: 'Echo 2',
      code: CODE,
      configuration: { currency: 'EUR' },
    });
    expect(updated).toMatchObject({ name: 'Echo 2', configuration: { currency: 'EUR' } });
    await management.reactors.patch(id, { name: 'Echo 3' });
    expect(await management.reactors.get(id)).toMatchObject({
      name: 'Echo 3',
      configuration: { currency: 'EUR' },
    });

    const caller = node(user.key);
    const reacted = await caller.reactors.react(id, { args: { value: 'hi' } });
    expect(reacted.raw).toEqual({ echo: 'hi', currency: 'EUR' });

    const accepted = await caller.reactors.reactAsync(id, { args: { value: 'later' } });
    expect(accepted.asyncReactorRequestId).toEqual(expect.any(String));
    let result: Record<string, unknown> = {};
    for (let i = 0; i < 300; i++) {
      result = (await caller.reactors.results.get(id, accepted.asyncReactorRequestId as string)) as Record<
        string,
        unknown
      >;
      if (result.status !== 'pending') {
        break;
      }
      await sleep(100);
    }
    expect(result).toMatchObject({ status: 'completed', raw: { echo: 'later', currency: 'EUR' } });

    await management.reactors.delete(id);
    await expect(management.reactors.get(id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('node-sdk: create and patch a proxy with disable_detokenization and a code transform', async () => {
    const management = node(tenant.key);
    const transform = 'module.exports = async (req) => ({ body: req.args.body, headers: req.args.headers });';
    const created = await management.proxies.create({
      name: 'Payments',
      destinationUrl: 'https://api.example.com/v1',
      requestTransform: { type: 'code', code: transform },
      disableDetokenization: true,
    });
    expect(created).toMatchObject({
      disableDetokenization: true,
      requestTransform: { type: 'code', code: transform },
    });
    await management.proxies.patch(created.id as string, {
      name: 'Payments 2',
      disableDetokenization: false,
    });
    expect(await management.proxies.get(created.id as string)).toMatchObject({
      name: 'Payments 2',
      disableDetokenization: false,
      requestTransform: { type: 'code', code: transform },
    });
    await expect(
      management.proxies.create({
        name: 'Tokenizing',
        destinationUrl: 'https://api.example.com/v1',
        requestTransform: { type: 'tokenize' },
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
  });

  it('basis-theory-js: create, retrieve, update, patch and react with a code reactor; patch a proxy', async () => {
    const bt = await js(tenant.key);
    const reactor = await bt.reactors.create({
      name: 'Legacy',
      code: CODE,
      configuration: { currency: 'USD' },
    });
    expect(reactor).toMatchObject({ name: 'Legacy', code: CODE, configuration: { currency: 'USD' } });
    expect((await bt.reactors.retrieve(reactor.id)).code).toBe(CODE);
    await bt.reactors.update(reactor.id, {
      name: 'Legacy 2',
      code: CODE,
      configuration: { currency: 'GBP' },
    });
    await bt.reactors.patch(reactor.id, { name: 'Legacy 3' });
    expect(await bt.reactors.retrieve(reactor.id)).toMatchObject({
      name: 'Legacy 3',
      configuration: { currency: 'GBP' },
    });
    const caller = await js(user.key);
    const reacted = await caller.reactors.react(reactor.id, { args: { value: 'js' } });
    expect(reacted.raw).toEqual({ echo: 'js', currency: 'GBP' });

    const proxy = await bt.proxies.create({
      name: 'Legacy proxy',
      destinationUrl: 'https://api.example.com/v1',
    });
    await bt.proxies.patch(proxy.id, { name: 'Legacy proxy 2', configuration: { currency: 'USD' } });
    expect(await bt.proxies.retrieve(proxy.id)).toMatchObject({
      name: 'Legacy proxy 2',
      configuration: { currency: 'USD' },
    });
  });
});
