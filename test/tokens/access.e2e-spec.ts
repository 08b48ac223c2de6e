import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  CardData,
  rule,
  tokenApp,
  tokensApi,
  TokensApi,
} from '../support/token-factory';

describe('access rules on /tokens', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  /** Permissions and no rules: create/update/read mask everywhere. */
  let writer: { id: string; key: string; api: TokensApi };
  let card: { id: string; data: CardData };
  let generic: string;

  const masked = (data: CardData): object => ({
    number: `XXXXXXXXXXXX${data.number.slice(-4)}`,
    expiration_month: data.expiration_month,
    expiration_year: data.expiration_year,
  });

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    writer = await tokenApp(ctx, tenant);
    const data = cardData();
    card = { id: (await writer.api.create({ type: 'card', data }).expect(201)).body.id, data };
    generic = (await writer.api.create({ type: 'token', data: { secret: 'generic-1' } }).expect(201)).body.id;
  });
  afterAll(() => ctx.close());

  const readerWith = async (transform: 'reveal' | 'mask' | 'redact'): Promise<TokensApi> =>
    (await tokenApp(ctx, tenant, [rule('/', transform, ['token:read'])], ['token:read'])).api;

  describe('transforms on get and list', () => {
    it('reveal returns the raw data and the evaluated mask', async () => {
      const api = await readerWith('reveal');
      for (const res of [await api.get(card.id).expect(200), await api.list(`?id=${card.id}`).expect(200)]) {
        const token = res.body.data?.[0] ?? res.body;
        expect(token.data).toEqual(card.data);
        expect(token.mask).toEqual(masked(card.data));
      }
      expect((await api.get(generic).expect(200)).body.data).toEqual({ secret: 'generic-1' });
    });

    it('mask returns the evaluated mask as data', async () => {
      const api = await readerWith('mask');
      const got = await api.get(card.id).expect(200);
      expect(got.body.data).toEqual(masked(card.data));
      expect(got.body.mask).toEqual(masked(card.data));
      const list = await api.list(`?id=${card.id}`).expect(200);
      expect(list.body.data[0].data).toEqual(masked(card.data));
      expect(got.text).not.toContain(card.data.number);
    });

    it('redact returns neither data nor mask', async () => {
      const api = await readerWith('redact');
      const got = await api.get(card.id).expect(200);
      expect(got.body).not.toHaveProperty('data');
      expect(got.body).not.toHaveProperty('mask');
      expect(got.body).toMatchObject({ id: card.id, type: 'card', containers: ['/pci/high/'] });
      const list = await api.list(`?id=${card.id}`).expect(200);
      expect(list.body.data[0]).not.toHaveProperty('data');
      expect(list.body.data[0]).not.toHaveProperty('mask');
    });

    it('an application with permissions and no rules reads masked data', async () => {
      const api = (await tokenApp(ctx, tenant, [], ['token:read'])).api;
      expect((await api.get(card.id).expect(200)).body.data).toEqual(masked(card.data));
      expect((await api.list(`?id=${card.id}`).expect(200)).body.data[0].data).toEqual(masked(card.data));
    });

    it('a token without a mask shows no data under the mask transform', async () => {
      const api = await readerWith('mask');
      for (const token of [
        (await api.get(generic).expect(200)).body,
        (await api.list(`?id=${generic}`)).body.data[0],
      ]) {
        expect(token).not.toHaveProperty('data');
        expect(token).not.toHaveProperty('mask');
      }
    });

    it('write responses never reveal, even with a reveal rule', async () => {
      const api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
      const data = cardData();
      const created = await api.create({ type: 'card', data }).expect(201);
      expect(created.body.data).toEqual(masked(data));
      const patched = await api.patch(created.body.id, { data: { expiration_month: 2 } }).expect(200);
      expect(patched.body.data).toEqual({ ...masked(data), expiration_month: 2 });
      const token = await api.create({ type: 'token', data: 'write-secret' }).expect(201);
      expect(token.body).not.toHaveProperty('data');
      expect(token.text).not.toContain('write-secret');
      expect((await api.get(created.body.id).expect(200)).body.data.number).toBe(data.number);
    });
  });

  describe('rule selection', () => {
    /** Through the API, so rules given out of order are stored by priority. */
    async function appViaApi(rules: object[]): Promise<TokensApi> {
      const res = await ctx.http
        .post('/applications')
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'rules', type: 'private', permissions: [], rules })
        .expect(201);
      return tokensApi(ctx, res.body.key);
    }

    it('takes the first rule by ascending priority that covers a container', async () => {
      const api = await appViaApi([
        { priority: 20, container: '/', transform: 'reveal', permissions: ['token:read'] },
        { priority: 10, container: '/PCI/', transform: 'redact', permissions: ['token:read'] },
      ]);
      expect((await api.get(card.id).expect(200)).body).not.toHaveProperty('data');
      expect((await api.get(generic).expect(200)).body.data).toEqual({ secret: 'generic-1' });
    });

    it('goes by priority, not by the stored order of the rules', async () => {
      const api = (
        await tokenApp(ctx, tenant, [
          rule('/', 'reveal', ['token:read'], 20),
          rule('/pci/', 'redact', ['token:read'], 10),
        ])
      ).api;
      expect((await api.get(card.id).expect(200)).body).not.toHaveProperty('data');
      expect((await api.get(generic).expect(200)).body.data).toEqual({ secret: 'generic-1' });
    });

    it('skips a covering rule that lacks the permission', async () => {
      const api = await appViaApi([
        { priority: 1, container: '/pci/', transform: 'reveal', permissions: ['token:create'] },
        { priority: 2, container: '/', transform: 'mask', permissions: ['token:read'] },
      ]);
      expect((await api.get(card.id).expect(200)).body.data).toEqual(masked(card.data));
    });

    it('matches any one of the token containers, on whole segments', async () => {
      const data = cardData();
      const multi = await writer.api
        .create({ type: 'card', data, containers: ['/general/', '/pci/high/'] })
        .expect(201);
      const api = (
        await tokenApp(ctx, tenant, [rule('/pci/high/', 'reveal', ['token:read'])], ['token:read'])
      ).api;
      expect((await api.get(multi.body.id).expect(200)).body.data).toEqual(data);
      const pc = (await tokenApp(ctx, tenant, [rule('/pc/', 'reveal', ['token:read'])], ['token:read'])).api;
      await pc.get(card.id).expect(403);
    });
  });

  describe('403 and 401', () => {
    it('an application without a matching rule gets 403 on get, patch and delete, and the token is untouched', async () => {
      const generalOnly = await tokenApp(ctx, tenant, [rule('/general/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
      await generalOnly.api.get(card.id).expect(403);
      await generalOnly.api.patch(card.id, { metadata: { touched: 'yes' } }).expect(403);
      await generalOnly.api.delete(card.id).expect(403);
      const list = await generalOnly.api.list(`?id=${card.id}`).expect(200);
      expect(list.body.data).toEqual([]);
      const got = await writer.api.get(card.id).expect(200);
      expect(got.body.metadata).toBeNull();
      expect(got.body.modified_at).toBeNull();
      await generalOnly.api.get(generic).expect(200);
    });

    it('an update may not move a token into a container without token:update', async () => {
      const pciOnly = await tokenApp(ctx, tenant, [rule('/pci/', 'mask', ALL_TOKEN_PERMISSIONS)]);
      const created = await pciOnly.api.create({ type: 'card', data: cardData() }).expect(201);
      await pciOnly.api.patch(created.body.id, { containers: ['/general/'] }).expect(403);
      expect((await pciOnly.api.get(created.body.id).expect(200)).body.containers).toEqual(['/pci/high/']);
    });

    it('a public application can create but not read', async () => {
      const pub = await ctx.newApplication(tenant, 'public', ['token:create', 'token:update']);
      const api = tokensApi(ctx, pub.key);
      const data = cardData();
      const created = await api.create({ type: 'card', data }).expect(201);
      expect(created.body.data).toEqual(masked(data));
      await api.list().expect(403);
      await api.get(created.body.id).expect(403);
      await api.delete(created.body.id).expect(403);
    });

    it('a management key gets 403 on /tokens', async () => {
      const api = tokensApi(ctx, tenant.key);
      await api.list().expect(403);
      await api.get(card.id).expect(403);
      await api.create({ type: 'card', data: cardData() }).expect(403);
    });

    it('no key or an unknown key is 401', async () => {
      await ctx.http.get('/tokens').expect(401);
      await tokensApi(ctx, 'key_unknown').get(card.id).expect(401);
    });
  });
});
