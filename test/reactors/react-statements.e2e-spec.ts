import { recordsOf } from '../support/audit';
import { ECHO_CODE, newReactor, reactorsApi } from '../support/reactor-factory';
import { statementsOf } from '../support/statements';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

/**
 * A code reactor's reaction by a caller whose token:use transform is the same on every container reads its
 * tokens and writes its records (the tokens used, the invocation) in one statement, beside the reactor's
 * read: two statements. Other reactions read, then record, as before.
 */
describe('statements per reaction', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  let card: string;
  let number: string;
  let codeReactor: string;
  beforeAll(async () => {
    // No scheduled jobs: the sealer's own statements would mix with the request's.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false', SANDBOX_WORKERS: '1' } });
    tenant = await ctx.newTenant();
    api = reactorsApi(ctx, tenant);
    caller = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    const data = cardData();
    number = data.number;
    card = (await caller.api.create({ type: 'card', data }).expect(201)).body.id as string;
    codeReactor = (await api.create({ name: 'Echo', code: ECHO_CODE, configuration: {} }).expect(201)).body
      .id as string;
    // Warm: leases, keys, caches and the worker are taken by the first requests.
    await api.react(codeReactor, { args: { card: `{{ ${card} }}` } }, caller.key).expect(200);
  });
  afterAll(() => ctx.close());

  const used = async (): Promise<string[]> =>
    (await recordsOf(ctx, tenant.tenantId, 'detokenize', null)).map((r) => r.message);
  const invoked = async (reactorId: string): Promise<string[]> =>
    (await recordsOf(ctx, tenant.tenantId, 'react', reactorId)).map((r) => r.message);

  it('a code reaction is the reactor read and one statement for the tokens and both records', async () => {
    const [usedBefore, invokedBefore] = [await used(), await invoked(codeReactor)];
    let answer: unknown;
    const sent = await statementsOf(async () => {
      answer = (await api.react(codeReactor, { args: { card: `{{ ${card} }}` } }, caller.key).expect(200))
        .body.raw;
    });
    expect(sent).toHaveLength(2);
    const combined = sent.filter((text) => /INSERT INTO audit_records/.test(text));
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatch(/JOIN tokens ON/);
    expect(answer).toEqual({ card: expect.objectContaining({ number }) });
    expect(await used()).toEqual([...usedBefore, `Tokens used: ${card} (reveal)`]);
    expect(await invoked(codeReactor)).toEqual([...invokedBefore, 'Reactor invoked']);
  });

  it('records nothing for an unknown reactor or an unknown token', async () => {
    const usedBefore = await used();
    const unknown = '00000000-0000-4000-8000-000000000000';
    await api.react(unknown, { args: { card: `{{ ${card} }}` } }, caller.key).expect(404);
    expect(await invoked(unknown)).toEqual([]);
    const invokedBefore = await invoked(codeReactor);
    await api
      .react(codeReactor, { args: { card: `{{ ${card} }}`, x: '{{ nope }}' } }, caller.key)
      .expect(400);
    expect(await used()).toEqual(usedBefore);
    expect(await invoked(codeReactor)).toEqual(invokedBefore);
  });

  it('a formula reaction (once seen), or a caller whose transform depends on the containers, reads then records', async () => {
    const { reactorId: formula } = await newReactor(ctx, tenant, {
      code: ECHO_CODE,
      request_parameters: [{ name: 'card.number', type: 'string' }],
    });
    const ruled = await tokenApp(ctx, tenant, [
      rule('/pci/', 'mask', ['token:use']),
      rule('/', 'reveal', ['token:use'], 2),
    ]);
    for (const [reactorId, key] of [
      [formula, caller.key],
      [codeReactor, ruled.key],
    ]) {
      await api.react(reactorId, { args: { card: `{{ ${card} }}` } }, key).expect(200);
      const before = await invoked(reactorId);
      const sent = await statementsOf(() =>
        api.react(reactorId, { args: { card: `{{ ${card} }}` } }, key).expect(200),
      );
      expect(sent).toHaveLength(3);
      expect(sent.filter((text) => /INSERT INTO audit_records/.test(text))).toEqual([sent[2]]);
      expect(await invoked(reactorId)).toEqual([...before, 'Reactor invoked']);
    }
  });
});
