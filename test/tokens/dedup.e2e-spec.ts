import { TestContext, TestTenant } from '../support/test-app';
import {
  ALL_TOKEN_PERMISSIONS,
  cardData,
  rawToken,
  rule,
  tokenApp,
  TokensApi,
} from '../support/token-factory';

describe('deduplicate_token', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let revealer: { id: string; key: string; api: TokensApi };

  beforeAll(async () => {
    ctx = await TestContext.create();
    // Many concurrent requests need one listening server rather than one ephemeral server per request.
    await ctx.vault.app.listen(0, '127.0.0.1');
    tenant = await ctx.newTenant();
    revealer = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
  });
  afterAll(() => ctx.close());

  async function liveRows(tenantId: string, type: string): Promise<{ id: string }[]> {
    return ctx.dataSource.query(
      'SELECT id FROM tokens WHERE tenant_id = $1 AND type = $2 AND deleted_at IS NULL',
      [tenantId, type],
    );
  }

  it('returns the existing live token with _extras.deduplicated, masked even for a reveal rule', async () => {
    const data = cardData();
    const first = await revealer.api.create({ type: 'card', data, deduplicate_token: true }).expect(201);
    expect(first.body).not.toHaveProperty('_extras');
    const second = await revealer.api
      .create({
        type: 'card',
        data: { ...data, expiration_month: 1 },
        metadata: { x: 'y' },
        deduplicate_token: true,
      })
      .expect(201);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body._extras).toEqual({ deduplicated: true });
    expect(second.body.fingerprint).toBe(first.body.fingerprint);
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.metadata).toBeNull();
    expect(second.text).not.toContain(data.number);
    const stored = await revealer.api.get(first.body.id).expect(200);
    expect(stored.body.data).toEqual(data);
  });

  it('creates a new token when deduplicate_token is not true', async () => {
    const data = cardData();
    const a = await revealer.api.create({ type: 'card', data }).expect(201);
    const b = await revealer.api.create({ type: 'card', data }).expect(201);
    const c = await revealer.api.create({ type: 'card', data, deduplicate_token: false }).expect(201);
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
    expect(b.body.fingerprint).toBe(a.body.fingerprint);
    expect(c.body).not.toHaveProperty('_extras');
  });

  it('follows the fingerprint expression', async () => {
    const fp = '{{ data.number }}-{{ data.expiration_year }}';
    const data = cardData();
    const a = await revealer.api.create({ type: 'card', data, fingerprint_expression: fp }).expect(201);
    const sameYear = await revealer.api
      .create({
        type: 'card',
        data: { ...data, cvc: '999' },
        fingerprint_expression: fp,
        deduplicate_token: true,
      })
      .expect(201);
    expect(sameYear.body.id).toBe(a.body.id);
    const otherYear = await revealer.api
      .create({
        type: 'card',
        data: { ...data, expiration_year: 2035 },
        fingerprint_expression: fp,
        deduplicate_token: true,
      })
      .expect(201);
    expect(otherYear.body.id).not.toBe(a.body.id);
  });

  it('matches neither another type, another tenant nor a deleted token', async () => {
    // the same fingerprint source under two types
    const a = await revealer.api
      .create({ type: 'token', data: '4111111111111111', fingerprint_expression: '{{ data }}' })
      .expect(201);
    const asCard = await revealer.api
      .create({
        type: 'card',
        data: { number: '4111111111111111' },
        fingerprint_expression: '{{ data.number }}',
        deduplicate_token: true,
      })
      .expect(201);
    expect(asCard.body.id).not.toBe(a.body.id);

    const other = await tokenApp(ctx, await ctx.newTenant('Other'));
    const elsewhere = await other.api
      .create({
        type: 'token',
        data: '4111111111111111',
        fingerprint_expression: '{{ data }}',
        deduplicate_token: true,
      })
      .expect(201);
    expect(elsewhere.body.id).not.toBe(a.body.id);
    expect(elsewhere.body).not.toHaveProperty('_extras');

    const gone = await revealer.api
      .create({ type: 'token', data: 'to-delete', deduplicate_token: true })
      .expect(201);
    await revealer.api.delete(gone.body.id).expect(204);
    const again = await revealer.api
      .create({ type: 'token', data: 'to-delete', deduplicate_token: true })
      .expect(201);
    expect(again.body.id).not.toBe(gone.body.id);
    expect(again.body).not.toHaveProperty('_extras');
  });

  it('64 concurrent deduplicating creates of one card leave exactly one live token', async () => {
    const t = await ctx.newTenant('Concurrent');
    const app = await tokenApp(ctx, t);
    const data = cardData();
    const responses = await Promise.all(
      Array.from({ length: 64 }, () => app.api.create({ type: 'card', data, deduplicate_token: true })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(64).fill(201));
    const rows = await liveRows(t.tenantId, 'card');
    expect(rows).toHaveLength(1);
    expect(new Set(responses.map((r) => r.body.id))).toEqual(new Set([rows[0].id]));
    expect(responses.filter((r) => r.body._extras === undefined)).toHaveLength(1);
    const all: unknown[] = await ctx.dataSource.query('SELECT id FROM tokens WHERE tenant_id = $1', [
      t.tenantId,
    ]);
    expect(all).toHaveLength(1);
  });

  it('a caller who cannot read the existing token gets a new token: nothing of the original is disclosed', async () => {
    const data = cardData();
    const original = await revealer.api
      .create({ type: 'card', data, metadata: { owner: 'a' }, search_indexes: ['{{ data.number | last4 }}'] })
      .expect(201);
    // may create cards but read only /general/
    const writeOnly = await tokenApp(ctx, tenant, [
      rule('/pci/', 'reveal', ['token:create']),
      rule('/general/', 'reveal', ['token:read']),
    ]);
    const res = await writeOnly.api
      .create({ type: 'card', data, metadata: { owner: 'b' }, deduplicate_token: true })
      .expect(201);
    expect(res.body.id).not.toBe(original.body.id);
    expect(res.body).not.toHaveProperty('_extras');
    expect(res.text).not.toContain(original.body.id);
    expect(res.text).not.toContain(data.number);
    expect(res.body.metadata).toEqual({ owner: 'b' });
    const row = await rawToken(ctx, tenant.tenantId, original.body.id);
    expect(row.metadata).toEqual({ owner: 'a' });
  });

  it('a permission-only reader sees the duplicate masked', async () => {
    const app = await tokenApp(ctx, tenant);
    const data = cardData();
    const first = await app.api.create({ type: 'card', data }).expect(201);
    const dup = await app.api.create({ type: 'card', data, deduplicate_token: true }).expect(201);
    expect(dup.body).toMatchObject({
      id: first.body.id,
      data: first.body.data,
      _extras: { deduplicated: true },
    });
    expect(dup.body.fingerprint_expression).toBe('{{ data.number }}');
  });
});
