import { TestContext, TestTenant } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardNumber, rule, tokenApp, TokensApi } from '../support/token-factory';
import { statementsOf } from '../support/statements';

/**
 * A /tokenize whose tokens differ only in id, data and fingerprint sends the rest once, and its events by
 * their token ids alone, the database writing each webhook payload: what is stored and delivered must be
 * what a single create, or a batch sent row by row, stores and delivers.
 */
describe('tokenize batches sent once for all their tokens', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  const webhooks: Record<string, string> = {};

  const webhook = async (
    t: TestTenant,
    name: string,
    events: string[],
    status = 'enabled',
  ): Promise<string> => {
    const [{ id }] = await ctx.dataSource.query(
      `INSERT INTO webhooks (tenant_id, id, name, url, events, status, secret)
       VALUES ($1, gen_random_uuid(), $2, 'https://hooks.example.test/', $3, $4, '\\x00') RETURNING id`,
      [t.tenantId, name, events, status],
    );
    return id as string;
  };

  beforeAll(async () => {
    // No scheduled jobs: nothing delivers (or deletes) the outbox rows read here.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false' } });
    tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)])).api;
    webhooks.first = await webhook(tenant, 'first', ['token.created']);
    webhooks.second = await webhook(tenant, 'second', ['token.deleted', 'token.created']);
    await webhook(tenant, 'deletions', ['token.deleted']);
    await webhook(tenant, 'disabled', ['token.created'], 'disabled');
    // Warm: the key, the tenant keys and the leases are taken by the first requests.
    await api.tokenize(['warm', 'up']).expect(200);
    // Another tenant's subscriber hears nothing of this tenant's tokens.
    await webhook(await ctx.newTenant(), 'elsewhere', ['token.created']);
  });
  afterAll(() => ctx.close());

  interface Delivery {
    webhook_id: string;
    event_id: string;
    event_type: string;
    payload: string;
    status: string;
    created_at: Date;
    next_attempt_at: Date;
  }
  const deliveriesOf = async (ids: string[]): Promise<Delivery[]> =>
    ctx.dataSource.query(
      `SELECT webhook_id, event_id, event_type, payload, status, created_at, next_attempt_at
       FROM webhook_deliveries WHERE payload::json -> 'data' ->> 'id' = ANY ($1)`,
      [ids],
    );

  it('stores the tokens of alike definitions as a create of the same definition stores it', async () => {
    const numbers = [cardNumber(), cardNumber(), cardNumber()];
    const definition = (n: number): Record<string, unknown> => ({
      type: 'card',
      data: { number: numbers[n], expiration_month: 12, expiration_year: 2030 },
      containers: ['/pci/batch/'],
      metadata: { Owner: 'Ada', n: 'same' },
      mask: { number: '{{ data.number | reveal_last: 4 }}' },
      search_indexes: ['{{ data.number }}', '{{ data.expiration_year }}'],
      fingerprint_expression: '{{ data.number }}',
      deduplicate_token: false,
      expires_at: '2099-01-02T03:04:05.000Z',
    });
    let batch: { id: string }[] = [];
    const sent = await statementsOf(async () => {
      batch = (await api.tokenize([definition(0), definition(1), definition(2)]).expect(200)).body as {
        id: string;
      }[];
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/string_to_array/);
    expect(sent[0]).not.toMatch(/json_to_recordset/);
    const single = (await api.create(definition(1)).expect(201)).body.id as string;
    const columns = `type, data_key_version, mask, fingerprint, fingerprint_expression, containers, metadata,
      metadata_ci, search_indexes, deduplicate_token, expires_at, created_by, modified_by, modified_at, deleted_at`;
    const rows: Record<string, unknown>[] = await ctx.dataSource.query(
      `SELECT id, ${columns} FROM tokens WHERE tenant_id = $1 AND id = ANY ($2)`,
      [tenant.tenantId, [...batch.map((t) => t.id), single]],
    );
    const row = (id: string): Record<string, unknown> => {
      const { id: _id, ...rest } = rows.find((r) => r.id === id) as Record<string, unknown>;
      return rest;
    };
    // The same card as the batch's second: the same fingerprint too.
    expect(row(batch[1].id)).toEqual(row(single));
    expect(new Set(rows.map((r) => r.fingerprint)).size).toBe(3);
    // The ciphertext opens to the token's own data, bound to its own id.
    for (const [i, { id }] of batch.entries()) {
      const read = await api.get(id).expect(200);
      expect(read.body.data.number).toBe(numbers[i]);
    }
    // Each its own blind indexes: its number's and the year they share.
    const indexes: { hash: string; token_id: string }[] = await ctx.dataSource.query(
      'SELECT hash, token_id FROM token_search_indexes WHERE tenant_id = $1 AND token_id = ANY ($2)',
      [tenant.tenantId, batch.map((t) => t.id)],
    );
    expect(indexes).toHaveLength(6);
    expect(new Set(indexes.map((i) => i.hash)).size).toBe(4);
  });

  it('writes each subscribed webhook one delivery per token, with one event id per token and the payload a create gets', async () => {
    let ids: string[] = [];
    const sent = await statementsOf(async () => {
      ids = (await api.tokenize(['one', 'two', 'three']).expect(200)).body as string[];
    });
    expect(sent).toHaveLength(1);
    // The events by their ids: no JSON payloads sent.
    expect(sent[0]).not.toMatch(/json_array_elements/);
    const single = (await api.create({ type: 'token', data: 'four' }).expect(201)).body.id as string;
    const rows = await deliveriesOf([...ids, single]);
    const ofToken = (id: string): Delivery[] =>
      rows.filter((r) => (JSON.parse(r.payload) as { data: { id: string } }).data.id === id);
    // Only the two enabled subscribers of token.created of this tenant.
    expect(rows).toHaveLength(8);
    const reference = ofToken(single)[0];
    const shape = (d: Delivery): unknown => {
      const { id, tenant_id, created_at, data, ...rest } = JSON.parse(d.payload) as Record<string, unknown>;
      // The same text a create writes: keys in the same order, no spaces, the event id the row's.
      expect(d.payload).toBe(JSON.stringify({ id, ...rest, tenant_id, created_at, data }));
      expect(id).toBe(d.event_id);
      expect(new Date(created_at as string).getTime()).toBe(d.created_at.getTime());
      return { ...rest, tenant_id, keys: Object.keys(JSON.parse(d.payload)), data };
    };
    const events = new Set<string>();
    for (const id of ids) {
      const own = ofToken(id);
      expect(own.map((d) => d.webhook_id).sort()).toEqual([webhooks.first, webhooks.second].sort());
      // Both subscribers hear of the same event.
      expect(new Set(own.map((d) => d.event_id)).size).toBe(1);
      events.add(own[0].event_id);
      for (const d of own) {
        expect(d).toMatchObject({ event_type: 'token.created', status: 'pending' });
        expect(d.next_attempt_at.getTime()).toBe(d.created_at.getTime());
        expect(shape(d)).toEqual({ ...(shape(reference) as object), data: { id, type: 'token' } });
      }
    }
    expect(events.size).toBe(ids.length);
    expect(shape(reference)).toEqual({
      type: 'token.created',
      tenant_id: tenant.tenantId,
      keys: ['id', 'type', 'tenant_id', 'created_at', 'data'],
      data: { id: single, type: 'token' },
    });
  });

  it('sends a batch of mixed types row by row, its events as JSON, and stores the same', async () => {
    let body: unknown[] = [];
    const sent = await statementsOf(async () => {
      body = (
        await api
          .tokenize([
            'leaf',
            { type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } },
          ])
          .expect(200)
      ).body as unknown[];
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/json_to_recordset/);
    const ids = [body[0] as string, (body[1] as { id: string }).id];
    const rows = await deliveriesOf(ids);
    expect(rows).toHaveLength(4);
    expect(rows.map((r) => (JSON.parse(r.payload) as { data: { type: string } }).data.type).sort()).toEqual([
      'bank',
      'bank',
      'token',
      'token',
    ]);
  });

  it('writes no delivery for a batch of a tenant that has no subscriber', async () => {
    const quiet = await ctx.newTenant();
    const { api: quietApi } = await tokenApp(
      ctx,
      quiet,
      [rule('/', 'reveal', ['token:create'])],
      ['token:create'],
    );
    const ids = (await quietApi.tokenize(['a', 'b', 'c']).expect(200)).body as string[];
    expect(await deliveriesOf(ids)).toEqual([]);
    const [{ n }] = await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE id = ANY ($1)', [
      ids,
    ]);
    expect(n).toBe(3);
  });
});
