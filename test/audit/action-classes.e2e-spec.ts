import { recordOperatorAction } from '../../src/cli/operator-audit';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { Mailer } from '../../src/mail/mailer';
import { eventually, LogEntry, recordsOf } from '../support/audit';
import { applicationBody, createApplication } from '../support/application-factory';
import { CapturingMailer, secretOf } from '../support/mail';
import { formulaBody, newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { expectProblem } from '../support/problems';
import { tokenApp } from '../support/token-factory';

describe('audit records of management actions', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  const mailer = new CapturingMailer();
  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  /** Exactly one record of the operation on the entity, by the tenant's management application. */
  async function one(operation: string, entityId: string | null): Promise<LogEntry> {
    const records = await recordsOf(ctx, tenant.tenantId, operation, entityId);
    expect(records).toHaveLength(1);
    return records[0];
  }
  const management = async (): Promise<string> =>
    (await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key)).body.id as string;

  it('records application create, update (rules changed), regenerate and delete', async () => {
    const created = await createApplication(ctx, tenant, applicationBody());
    const id = created.body.id as string;
    const actor = await management();
    expect(await one('create', id)).toMatchObject({
      entity_type: 'application',
      actor_id: actor,
      outcome: 'success',
    });
    await ctx.http
      .put(`/applications/${id}`)
      .set('BT-API-KEY', tenant.key)
      .send({ name: 'Renamed', permissions: ['token:read'], rules: [] })
      .expect(200);
    expect((await one('update', id)).message).toBe('Application updated');
    await ctx.http
      .put(`/applications/${id}`)
      .set('BT-API-KEY', tenant.key)
      .send({
        name: 'Renamed',
        rules: [
          {
            description: 'r',
            priority: 1,
            container: '/pci/',
            transform: 'mask',
            permissions: ['token:read'],
          },
        ],
      })
      .expect(200);
    expect((await recordsOf(ctx, tenant.tenantId, 'update', id)).map((r) => r.message)).toContain(
      'Application updated (access rules changed)',
    );
    await ctx.http.post(`/applications/${id}/regenerate`).set('BT-API-KEY', tenant.key).expect(200);
    await one('regenerate', id);
    await ctx.http.delete(`/applications/${id}`).set('BT-API-KEY', tenant.key).expect(204);
    await one('delete', id);
  });

  it('records formula and reactor changes and each reaction, naming the tokens it used', async () => {
    const api = reactorsApi(ctx, tenant);
    const { formulaId, reactorId } = await newReactor(ctx, tenant);
    expect(await one('create', formulaId)).toMatchObject({ entity_type: 'reactor_formula' });
    expect(await one('create', reactorId)).toMatchObject({ entity_type: 'reactor' });
    expect((await api.updateFormula(formulaId, formulaBody({ name: 'Echo 2' }))).status).toBe(200);
    await one('update', formulaId);
    const updated = await api.update(reactorId, { name: 'R2', configuration: { currency: 'EUR' } });
    expect(updated.status).toBe(200);
    await one('update', reactorId);

    const user = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    const token = (await user.api.create({ type: 'token', data: 'x' })).body.id as string;
    const reacted = await api.react(reactorId, { args: { t: `{{ ${token} }}` } }, user.key);
    expect(reacted.status).toBe(200);
    expect(await one('react', reactorId)).toMatchObject({ actor_id: user.id });
    expect((await one('detokenize', null)).message).toBe(`Tokens used: ${token} (reveal)`);

    expect((await api.delete(reactorId)).status).toBe(204);
    await one('delete', reactorId);
    expect((await api.deleteFormula(formulaId)).status).toBe(204);
    await one('delete', formulaId);
  });

  it('records a reaction’s tokens and invocation together, and only the tokens when its arguments are refused', async () => {
    const api = reactorsApi(ctx, tenant);
    const { reactorId } = await newReactor(ctx, tenant);
    const user = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    const token = (await user.api.create({ type: 'token', data: 'not a number' })).body.id as string;
    const used = `Tokens used: ${token} (reveal)`;
    const usesOf = async (): Promise<LogEntry[]> =>
      (await recordsOf(ctx, tenant.tenantId, 'detokenize', null)).filter((r) => r.message === used);

    // The formula declares `amount` a number: the token's text cannot be one, so the code never runs.
    const refused = await api.react(reactorId, { args: { amount: `{{ ${token} }}` } }, user.key);
    expect(refused.status).toBe(400);
    expect(await usesOf()).toHaveLength(1);
    expect(await recordsOf(ctx, tenant.tenantId, 'react', reactorId)).toHaveLength(0);

    const reacted = await api.react(reactorId, { args: { note: `{{ ${token} }}` } }, user.key);
    expect(reacted.status).toBe(200);
    expect(await usesOf()).toHaveLength(2);
    expect(await one('react', reactorId)).toMatchObject({ actor_id: user.id });
  });

  it('answers 404 for an unknown reactor before anything about its arguments, and records no token use', async () => {
    const api = reactorsApi(ctx, tenant);
    const user = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    const token = (await user.api.create({ type: 'token', data: 'kept' })).body.id as string;
    const unknownReactor = '00000000-0000-4000-8000-000000000000';
    const before = await recordsOf(ctx, tenant.tenantId, 'detokenize', null);

    // The token and the reactor are read at once; the answer still names the reactor, whatever the arguments.
    expectProblem(await api.react(unknownReactor, { args: { t: `{{ ${token} }}` } }, user.key), 404);
    const missingToken = '{{ 00000000-0000-4000-8000-000000000001 }}';
    expectProblem(await api.react(unknownReactor, { args: { t: missingToken } }, user.key), 404);
    const tooMany = Array.from({ length: 101 }, (_, i) => `{{ missing-${i} }}`);
    expectProblem(await api.react(unknownReactor, { args: { many: tooMany } }, user.key), 404);

    expect(await recordsOf(ctx, tenant.tenantId, 'detokenize', null)).toHaveLength(before.length);
    expect(await recordsOf(ctx, tenant.tenantId, 'react', unknownReactor)).toHaveLength(0);
  });

  it('records a token a reactor creates through req.bt as its own create, by the reactor’s application', async () => {
    const api = reactorsApi(ctx, tenant);
    const writer = await tokenApp(ctx, tenant, [], ['token:create']);
    const code =
      "module.exports = async (req) => ({ raw: { id: (await req.bt.tokens.create({ type: 'token', data: 'from code' })).id } });";
    const created = await api.create({ name: 'Creates', code, application: { id: writer.id } });
    expect(created.status).toBe(201);
    const caller = await tokenApp(ctx, tenant, [], ['token:use']);
    const reacted = await api.react(created.body.id as string, { args: {} }, caller.key);
    expect(reacted.status).toBe(200);
    const tokenId = reacted.body.raw.id as string;
    expect(await one('create', tokenId)).toMatchObject({
      actor_id: writer.id,
      actor_type: 'application',
      entity_type: 'token',
      outcome: 'success',
    });
  });

  it('records webhook create, update and delete', async () => {
    const body = { name: 'Hook', url: 'https://hooks.example.com/in', events: ['tenant.invitation.deleted'] };
    const created = await ctx.http.post('/webhooks').set('BT-API-KEY', tenant.key).send(body);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    try {
      const manager = await management();
      expect(await one('create', id)).toMatchObject({ entity_type: 'webhook', actor_id: manager });
      const renamed = await ctx.http
        .put(`/webhooks/${id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ ...body, name: 'Hook 2' });
      expect(renamed.status).toBe(200);
      await one('update', id);
    } finally {
      expect((await ctx.http.delete(`/webhooks/${id}`).set('BT-API-KEY', tenant.key)).status).toBe(204);
    }
    await one('delete', id);
  });

  it('records invitations (create, resend, delete), the member who accepts and the member removed', async () => {
    const invite = (email: string) =>
      ctx.http.post('/tenants/self/invitations').set('BT-API-KEY', tenant.key).send({ email });
    const dropped = (await invite('gone@example.com')).body.id as string;
    await one('create', dropped);
    await ctx.http
      .post(`/tenants/self/invitations/${dropped}/resend`)
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    await one('resend', dropped);
    await ctx.http.delete(`/tenants/self/invitations/${dropped}`).set('BT-API-KEY', tenant.key).expect(204);
    await one('delete', dropped);

    const sentBefore = mailer.sent.length;
    const kept = (await invite('rose@example.com')).body.id as string;
    expect((await one('create', kept)).entity_type).toBe('tenant_invitation');
    const secret = await eventually(() =>
      Promise.resolve(
        mailer.sent.length > sentBefore ? secretOf(mailer.sent[mailer.sent.length - 1].text) : null,
      ),
    );
    const accepted = await ctx.http
      .post('/invitations/accept')
      .send({ token: secret, first_name: 'Rose', last_name: 'Tyler' });
    expect(accepted.status).toBe(200);
    const memberId = accepted.body.member.id as string;
    const joined = await one('create', memberId);
    expect(joined).toMatchObject({ entity_type: 'tenant_member', actor_type: 'user' });
    await ctx.http.delete(`/tenants/self/members/${memberId}`).set('BT-API-KEY', tenant.key).expect(204);
    await one('delete', memberId);
  });

  it('records key rotation commands as the system', async () => {
    const version = await ctx.get(KeyRotation).rotateDataKey(tenant.tenantId);
    await recordOperatorAction(
      ctx.vault.app,
      [tenant.tenantId],
      'rotate',
      `Data key rotated to version ${version}`,
    );
    expect(await one('rotate', null)).toMatchObject({
      actor_type: 'system',
      actor_id: null,
      entity_type: 'tenant_key',
    });
  });
});
