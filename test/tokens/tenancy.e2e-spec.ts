import { TokensRepository } from '../../src/tokens/tokens.repository';
import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  rawToken,
  rule,
  tokenApp,
  TokensApi,
} from '../support/token-factory';

describe('tenancy and deletion', () => {
  let ctx: TestContext;
  let tenantA: TestTenant;
  let tenantB: TestTenant;
  let a: TokensApi;
  let b: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenantA = await ctx.newTenant('Alpha');
    tenantB = await ctx.newTenant('Beta');
    a = (await tokenApp(ctx, tenantA, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
    b = (await tokenApp(ctx, tenantB, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
  });
  afterAll(() => ctx.close());

  describe('tenants', () => {
    it('one tenant cannot get, patch or delete another tenant’s token, and does not list it', async () => {
      const dataB = cardData();
      const tokenB = (await b.create({ type: 'card', data: dataB, metadata: { who: 'b' } }).expect(201)).body
        .id;
      const tokenA = (await a.create({ type: 'card', data: cardData(), metadata: { who: 'a' } }).expect(201))
        .body.id;

      for (const res of [
        await a.get(tokenB),
        await a.patch(tokenB, { metadata: { who: 'a' } }),
        await a.delete(tokenB),
      ]) {
        expect(res.status).toBe(404);
        expect(res.text).not.toContain(dataB.number);
      }
      const listed = await a.list().expect(200);
      expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual([tokenA]);
      expect(listed.body.pagination.total_items).toBe(1);
      expect((await a.list(`?id=${tokenB}`).expect(200)).body.data).toEqual([]);
      expect((await a.list('?metadata.who=b').expect(200)).body.data).toEqual([]);

      const stillB = await b.get(tokenB).expect(200);
      expect(stillB.body).toMatchObject({ data: dataB, metadata: { who: 'b' }, modified_at: null });
    });

    it('the same custom id lives independently in two tenants', async () => {
      const dataA = cardData();
      const dataB = cardData();
      const inA = await a.create({ id: 'shared-id-1', type: 'card', data: dataA }).expect(201);
      const inB = await b.create({ id: 'shared-id-1', type: 'card', data: dataB }).expect(201);
      expect(inA.body.tenant_id).toBe(tenantA.tenantId);
      expect(inB.body.tenant_id).toBe(tenantB.tenantId);

      expect((await a.get('shared-id-1').expect(200)).body.data).toEqual(dataA);
      expect((await b.get('shared-id-1').expect(200)).body.data).toEqual(dataB);

      await a.patch('shared-id-1', { metadata: { edited: 'a' } }).expect(200);
      expect((await b.get('shared-id-1').expect(200)).body.metadata).toBeNull();

      await a.delete('shared-id-1').expect(204);
      await a.get('shared-id-1').expect(404);
      expect((await b.get('shared-id-1').expect(200)).body.data).toEqual(dataB);
      expect((await b.list('?id=shared-id-1').expect(200)).body.data).toHaveLength(1);
    });

    it('a duplicate id is 409 within a tenant only', async () => {
      await a.create({ id: 'only-once', type: 'token', data: 'x' }).expect(201);
      await a.create({ id: 'only-once', type: 'token', data: 'y' }).expect(409);
      await b.create({ id: 'only-once', type: 'token', data: 'z' }).expect(201);
    });
  });

  describe('deleted tokens', () => {
    it('DELETE answers 204, then the token is gone but its tombstone row remains', async () => {
      const data = cardData();
      const created = await a
        .create({
          id: 'to-be-deleted',
          type: 'card',
          data,
          metadata: { k: 'v' },
          search_indexes: ['{{ data.number }}'],
        })
        .expect(201);
      const res = await a.delete(created.body.id).expect(204);
      expect(res.text).toBe('');

      await a.get(created.body.id).expect(404);
      await a.patch(created.body.id, { metadata: { k: 'w' } }).expect(404);
      await a.delete(created.body.id).expect(404);
      expect((await a.list('?id=to-be-deleted').expect(200)).body.data).toEqual([]);

      const row = await rawToken(ctx, tenantA.tenantId, 'to-be-deleted');
      expect(row).toMatchObject({
        id: 'to-be-deleted',
        type: 'card',
        data: null,
        fingerprint: null,
        metadata: null,
      });
      expect(row.deleted_at).not.toBeNull();
      expect(row.created_at).not.toBeNull();
      expect(JSON.stringify(row)).not.toContain(data.number);

      const again = await a.create({ id: 'to-be-deleted', type: 'card', data }).expect(409);
      expect(again.text).not.toContain(data.number);
    });

    it('deleting needs token:delete on the token’s container', async () => {
      const created = await a.create({ type: 'card', data: cardData() }).expect(201);
      const noDelete = await tokenApp(ctx, tenantA, [rule('/', 'reveal', ['token:read'])], ['token:read']);
      await noDelete.api.delete(created.body.id).expect(403);
      const otherContainer = await tokenApp(ctx, tenantA, [rule('/general/', 'redact', ['token:delete'])]);
      await otherContainer.api.delete(created.body.id).expect(403);
      await a.get(created.body.id).expect(200);
      expect((await rawToken(ctx, tenantA.tenantId, created.body.id)).deleted_at).toBeNull();
    });
  });

  /**
   * Token reads that arrive together share one statement (PrimaryKeyReads): each must still get exactly its
   * own tenant's token, or nothing.
   */
  describe('concurrent reads', () => {
    const dataOf = new Map<string, string>();
    let idsA: string[];
    let idB: string;

    beforeAll(async () => {
      idsA = [];
      for (let i = 0; i < 5; i++) {
        const id = (await a.create({ type: 'token', data: `alpha-${i}` }).expect(201)).body.id as string;
        idsA.push(id);
        dataOf.set(id, `alpha-${i}`);
      }
      idB = (await b.create({ type: 'token', data: 'beta-secret' }).expect(201)).body.id as string;
    });

    it('gives each of many simultaneous reads its own tenant’s token, the same token to each reader, none to others', async () => {
      const repository = ctx.get(TokensRepository);
      const now = new Date();
      // One read goes alone; the rest wait for it and then share one statement: repeats, a miss, another
      // tenant's id and a deleted token among them.
      const deleted = (await a.create({ type: 'token', data: 'gone' }).expect(201)).body.id as string;
      await a.delete(deleted).expect(204);
      const asks: { tenantId: string; id: string; expect: string | null }[] = [];
      for (let round = 0; round < 4; round++) {
        for (const id of idsA) {
          asks.push({ tenantId: tenantA.tenantId, id, expect: dataOf.get(id) as string });
        }
        asks.push({ tenantId: tenantA.tenantId, id: idB, expect: null });
        asks.push({ tenantId: tenantB.tenantId, id: idsA[0], expect: null });
        asks.push({ tenantId: tenantA.tenantId, id: 'no-such-token', expect: null });
        asks.push({ tenantId: tenantA.tenantId, id: deleted, expect: null });
        asks.push({ tenantId: tenantB.tenantId, id: idB, expect: 'beta-secret' });
      }
      const rows = await Promise.all(asks.map((ask) => repository.findLive(ask.tenantId, ask.id, now)));
      rows.forEach((row, i) => {
        const ask = asks[i];
        if (ask.expect === null) {
          expect(row).toBeNull();
        } else {
          expect(row).toMatchObject({ tenantId: ask.tenantId, id: ask.id });
          expect(row).not.toHaveProperty('key_n');
        }
      });
      // Two readers of one token never share an object.
      const firstReads = rows.filter((row) => row?.id === idsA[0]);
      expect(firstReads).toHaveLength(4);
      expect(new Set(firstReads).size).toBe(4);
    });

    it('answers simultaneous GETs of both tenants with each one’s own data', async () => {
      const reads = [...idsA.flatMap((id) => [a.get(id), a.get(id)]), b.get(idB), a.get(idB), b.get(idsA[1])];
      const answers = await Promise.all(reads);
      answers.slice(0, idsA.length * 2).forEach((res, i) => {
        expect(res.status).toBe(200);
        expect(res.body.data).toBe(dataOf.get(idsA[Math.floor(i / 2)]));
      });
      const [own, crossA, crossB] = answers.slice(idsA.length * 2);
      expect(own.status).toBe(200);
      expect(own.body.data).toBe('beta-secret');
      expect(crossA.status).toBe(404);
      expect(crossB.status).toBe(404);
      expect(JSON.stringify(crossA.body)).not.toContain('beta-secret');
    });
  });
});
