import { TestContext } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp } from '../support/token-factory';

jest.setTimeout(120_000);

/** A sealed vault is a state the operator chose: it must not page anyone while it waits for the key holders. */
describe('a sealed vault is quiet', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('says once that it is sealed, skips the jobs that need keys, and answers probes 503 without an error', async () => {
    // Audit records not chained yet (the jobs are off here): the chaining job needs the tenant's keys.
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    await app.api.create({ type: 'card', data: cardData() }).expect(201);
    const before = ctx.logs.length;
    await ctx.restart({
      VAULT_SEALED: 'true',
      VAULT_MASTER_KEYS: '',
      JOBS_ENABLED: 'true',
      AUDIT_SEAL_INTERVAL_MS: '100',
    });
    // From here on (the restart itself may log the embedded database's reconnection).
    const started = ctx.logs.length;
    for (let i = 0; i < 3; i++) {
      const ready = await ctx.http.get('/health/ready').expect(503);
      expect(JSON.stringify(ready.body)).toMatch(/sealed/);
    }
    // A data route says it is sealed (503, Retry-After) without logging a fault either.
    const refused = await app.api.create({ type: 'token', data: 'while sealed' }).expect(503);
    expect([refused.body.detail, refused.headers['retry-after']]).toEqual([
      expect.stringMatching(/sealed/),
      '30',
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    const logs = ctx.logs.slice(before);
    expect(ctx.logs.slice(started).filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
    expect(logs.join('\n')).not.toMatch(/audit-seal|audit-retention|key-cryptoperiods/);
    const sealed = logs.filter((l) => l.includes('Sealed: data routes answer 503'));
    expect(sealed).toHaveLength(1);
    expect(sealed[0]).toMatch(/"level":(30|40)/);
    // The probes are logged as requests, at info.
    const probes = logs.filter((l) => l.includes('"path":"/health/ready"'));
    expect(probes).toHaveLength(3);
    expect(probes.every((l) => l.includes('"level":30'))).toBe(true);
    const writes = logs.filter((l) => l.includes('"path":"/tokens"') && l.includes('"statusCode":503'));
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/"level":30/);
  });
});
