import { AuditService } from '../../src/audit/audit.service';
import { TokensRepository } from '../../src/tokens/tokens.repository';
import { recordsOf } from '../support/audit';
import { statementsOf } from '../support/statements';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

/**
 * GET /tokens/<id> by a caller whose transform is the same on every container (a rule-less application, or a
 * first rule naming `/`) reads the token and writes its audit record in one statement, one round trip; the
 * record is written only for a token it answers with. Other callers read first and record after.
 */
describe('statements per reveal', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let root: TokensApi;
  let id: string;
  beforeAll(async () => {
    // No scheduled jobs: the sealer's own statements would mix with the request's.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false' } });
    tenant = await ctx.newTenant();
    ({ api: root } = await tokenApp(ctx, tenant, [
      rule('/', 'reveal', ['token:create', 'token:read', 'token:delete']),
      rule('/pci/', 'mask', ['token:read'], 2),
    ]));
    id = (await root.create({ type: 'card', data: cardData(), containers: ['/pci/'] }).expect(201)).body
      .id as string;
    // Warm: leases, keys and caches are taken by the first requests.
    await root.get(id).expect(200);
  });
  afterAll(() => ctx.close());

  const reads = async (tokenId: string): Promise<string[]> =>
    (await recordsOf(ctx, tenant.tenantId, 'read', tokenId)).map((r) => r.message);

  it('a reveal under a first rule on / is one statement: the token and its audit record', async () => {
    const before = await reads(id);
    let number = '';
    const sent = await statementsOf(async () => {
      number = (await root.get(id).expect(200)).body.data.number as string;
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/FROM tokens WHERE tenant_id = \$1 AND id = \$2/);
    expect(sent[0]).toMatch(/INSERT INTO audit_records/);
    expect(number).toMatch(/^\d{16}$/);
    expect(await reads(id)).toEqual([...before, 'Token read (reveal)']);
  });

  it('a rule-less application reads with its default transform in one statement', async () => {
    const { api } = await tokenApp(ctx, tenant, [], ['token:read']);
    await api.get(id).expect(200);
    const before = await reads(id);
    const sent = await statementsOf(() => api.get(id).expect(200));
    expect(sent).toHaveLength(1);
    expect(await reads(id)).toEqual([...before, 'Token read (mask)']);
  });

  it('a caller whose transform depends on the containers reads, then records', async () => {
    const { api } = await tokenApp(ctx, tenant, [
      rule('/pci/', 'mask', ['token:read']),
      rule('/', 'reveal', ['token:read'], 2),
    ]);
    await api.get(id).expect(200);
    const before = await reads(id);
    const sent = await statementsOf(() => api.get(id).expect(200));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/INSERT INTO audit_records/);
    expect(await reads(id)).toEqual([...before, 'Token read (mask)']);
  });

  it('writes no read record for an unknown, an expired or a deleted token', async () => {
    await root.get('no-such-token').expect(404);
    expect(await reads('no-such-token')).toEqual([]);

    const expired = (await root.create({ type: 'token', data: 'x' }).expect(201)).body.id as string;
    await ctx.dataSource.query(
      `UPDATE tokens SET expires_at = now() - interval '1 minute' WHERE tenant_id = $1 AND id = $2`,
      [tenant.tenantId, expired],
    );
    await root.get(expired).expect(404);
    expect(await reads(expired)).toEqual([]);

    const deleted = (await root.create({ type: 'token', data: 'y' }).expect(201)).body.id as string;
    await root.delete(deleted).expect(204);
    await root.get(deleted).expect(404);
    expect(await reads(deleted)).toEqual([]);
  });

  it('reads that arrive together share one statement, a record written for each live token only', async () => {
    const repository = ctx.get(TokensRepository);
    const audit = ctx.get(AuditService);
    const gone = (await root.create({ type: 'token', data: 'z' }).expect(201)).body.id as string;
    await root.delete(gone).expect(204);
    const asks = [id, gone, 'no-such-token', id];
    const before = { live: await reads(id), gone: await reads(gone) };
    let rows: unknown[] = [];
    const sent = await statementsOf(async () => {
      rows = await Promise.all(
        asks.map((tokenId) => {
          const record = audit.recordPart({
            tenantId: tenant.tenantId,
            actor: null,
            entityType: 'token',
            entityId: tokenId,
            operation: 'read',
            message: 'Token read (together)',
          });
          return repository.findLiveAudited(tenant.tenantId, [tokenId], new Date(), [record!]);
        }),
      );
    });
    expect(sent.some((text) => /JOIN tokens ON/.test(text))).toBe(true);
    expect(sent.every((text) => /INSERT INTO audit_records/.test(text))).toBe(true);
    expect(rows.map((found) => (found as ({ id: string } | null)[])[0]?.id ?? null)).toEqual([
      id,
      null,
      null,
      id,
    ]);
    expect(await reads(id)).toEqual([...before.live, 'Token read (together)', 'Token read (together)']);
    expect(await reads(gone)).toEqual(before.gone);
    expect(await reads('no-such-token')).toEqual([]);
  });
});
