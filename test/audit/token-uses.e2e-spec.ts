import { chainKey, linkHash } from '../../src/audit/audit-chain';
import { AuditChain } from '../../src/audit/audit-chain.service';
import type { AuditRow } from '../../src/audit/audit-event';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { auditRows, logsApi } from '../support/audit';
import { ProxyFixture, proxyFixture } from '../support/proxy-fixture';
import { ECHO_CODE, reactorRunning, reactorsApi } from '../support/reactor-factory';
import type { TestHttpsServer } from '../support/https-test-server';
import type { TestTenant } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, tokenApp } from '../support/token-factory';

/** The auditor's first question: who touched this card? Every disclosure is found by each token it disclosed. */
describe('GET /logs?entity_id=<token id> finds every use of the token', () => {
  let fx: ProxyFixture;
  let echo: TestHttpsServer;
  let tenant: TestTenant;
  beforeAll(async () => {
    fx = await proxyFixture();
    echo = await fx.server();
    tenant = await fx.ctx.newTenant();
  });
  afterAll(() => fx.close());

  it('lists the reaction, the proxied call, the list, the search and the tokenize that used it', async () => {
    const app = await tokenApp(fx.ctx, tenant, [], [...ALL_TOKEN_PERMISSIONS, 'token:use', 'token:search']);
    const created = await app.api.create({ type: 'card', data: cardData(), metadata: { who: 'acme' } });
    expect(created.status).toBe(201);
    const card = created.body.id as string;
    const other = (await app.api.create({ type: 'token', data: 'not this one' }).expect(201)).body
      .id as string;

    const reactor = await reactorRunning(fx.ctx, tenant, 'code', ECHO_CODE);
    const reacted = await reactorsApi(fx.ctx, tenant).react(
      reactor,
      { args: { card: `{{ ${card} }}`, other: `{{ ${other} }}` } },
      app.key,
    );
    expect(reacted.status).toBe(200);
    const proxied = await fx.ctx.http
      .post('/proxy')
      .set('BT-API-KEY', app.key)
      .set('BT-PROXY-URL', fx.url(echo))
      .send({ number: `{{ ${card} | json: '$.number' }}` });
    expect(proxied.status).toBe(200);
    expect((await app.api.list('?metadata.who=acme')).status).toBe(200);
    const searched = await fx.ctx.http
      .post('/v2/tokens/search')
      .set('BT-API-KEY', app.key)
      .send({ query: `id:${card}` });
    expect([searched.status, searched.body.data?.length]).toEqual([200, 1]);
    const tokenized = await app.api.tokenize({
      a: { type: 'token', data: 'leaf one' },
      b: { type: 'token', data: 'leaf two' },
    });
    expect(tokenized.status).toBe(200);
    const leaf = tokenized.body.a.id as string;

    const logs = logsApi(fx.ctx, tenant);
    const found = await logs(`?entity_id=${card}&size=100`);
    expect(found.status).toBe(200);
    const operations = (found.body.data as { operation: string; actor_id: string }[]).map(
      (r) => `${r.operation} by ${r.actor_id === app.id ? 'app' : r.actor_id}`,
    );
    expect(operations.sort()).toEqual(
      [
        'create by app',
        'detokenize by app', // the reaction's arguments
        'detokenize by app', // the proxied body
        'list by app',
        'search by app',
      ].sort(),
    );
    expect(found.body.pagination.total_items).toBe(5);
    // A token created by /tokenize is found by its creation too; a token of no action is found by none.
    const leafLogs = await logs(`?entity_id=${leaf}&entity_type=token`);
    expect(leafLogs.body.data.map((r: { operation: string }) => r.operation)).toEqual(['tokenize']);
    expect((await logs('?entity_id=no-such-token')).body.data).toEqual([]);
    // The other token of the reaction is named by the reaction's record, and only by its own records.
    const otherOps = (await logs(`?entity_id=${other}`)).body.data.map(
      (r: { operation: string }) => r.operation,
    );
    expect(otherOps.sort()).toEqual(['create', 'detokenize']);
  });

  it("chains the token ids: the chain verifies, and an edit of a record's ids is found", async () => {
    const chain = fx.ctx.get(AuditChain);
    const mine = await fx.ctx.newTenant('Chained');
    const app = await tokenApp(fx.ctx, mine);
    const a = (await app.api.create({ type: 'token', data: 'first' }).expect(201)).body.id as string;
    const b = (await app.api.create({ type: 'token', data: 'second' }).expect(201)).body.id as string;
    expect((await app.api.list()).status).toBe(200);
    await chain.sealAll();
    expect(await chain.verify(mine.tenantId)).toBeNull();

    const [listed] = (await auditRows(fx.ctx, mine.tenantId)).filter((r) => r.operation === 'list');
    expect((listed as unknown as { token_ids: string[] }).token_ids.sort()).toEqual([a, b].sort());
    // Hiding a token from the filter (dropping it from token_ids) breaks the record's link.
    await fx.ctx.dataSource.query('UPDATE audit_records SET token_ids = ARRAY[$2] WHERE id = $1', [
      listed.id,
      a,
    ]);
    expect(await chain.verify(mine.tenantId)).toMatchObject({ recordId: listed.id });
  });

  it('links token ids as they are stored: the hash is the one over the text[] column, whatever the ids hold', async () => {
    const chain = fx.ctx.get(AuditChain);
    const mine = await fx.ctx.newTenant();
    const app = await tokenApp(fx.ctx, mine);
    // What an array's text form quotes or escapes: a bare NULL, quotes, commas, parentheses, non-ASCII.
    const ids = ['NULL', 'q"uo,te', "it's", '(ü-ñ)', 'x'.repeat(400)];
    const tokenized = await app.api.tokenize(ids.map((id, i) => ({ type: 'token', id, data: `odd ${i}` })));
    expect(tokenized.status).toBe(200);
    await chain.sealAll();
    expect(await chain.verify(mine.tenantId)).toBeNull();
    // Read back as the driver parses a text[] (the sealer reads the ids as JSON): the same link.
    const [row]: (AuditRow & { seq: string; prev_hash: string | null; hash: string })[] =
      await fx.ctx.dataSource.query(
        `SELECT r.*, l.seq::text AS seq, l.prev_hash, l.hash FROM audit_records r
         JOIN audit_links l ON l.tenant_id = r.tenant_id AND l.record_id = r.id
         WHERE r.tenant_id = $1 AND r.operation = 'tokenize'`,
        [mine.tenantId],
      );
    expect(row.token_ids).toEqual(ids);
    const key = chainKey(await fx.ctx.get(TenantKeysService).hmacKey(mine.tenantId));
    expect(linkHash(key, row, row.seq, row.prev_hash)).toBe(row.hash);
  });
});
