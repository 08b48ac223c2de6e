import { logger as jsSdkTelemetry } from '@basis-theory/basis-theory-js/common/logging';
import { SdkClients } from '../support/sdk-clients';
import { Mailer } from '../../src/mail/mailer';
import { CapturingMailer, secretOf } from '../support/mail';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, cardNumber } from '../support/token-factory';

/**
 * The official SDKs, pointed at the vault on 127.0.0.1 as a team leaving the hosted vault would point them,
 * calling every in-scope method and checking the values they hand back (not only that they did not throw).
 * Code reactors, async react and reactor/proxy PATCH are covered by their own helper's tests.
 */
describe('official SDKs against the vault', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let sdks: SdkClients;
  const mailer = new CapturingMailer();

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Mailer, useValue: mailer }] });
    sdks = await SdkClients.listen(ctx);
    tenant = await ctx.newTenant('Sdk');
  });
  afterAll(() => ctx.close());

  const node = (apiKey: string) => sdks.node(apiKey);
  const js = (apiKey: string) => sdks.js(apiKey);

  async function privateKey(): Promise<string> {
    const created = await node(tenant.key).applications.create({
      name: 'Backend',
      type: 'private',
      permissions: [
        'token:create',
        'token:read',
        'token:update',
        'token:delete',
        'token:search',
        'token:use',
      ],
    });
    return created.key as string;
  }

  describe('@basis-theory/node-sdk 5.7.0', () => {
    it('applications and application keys: create (also without a key), get, list, update, keys, delete', async () => {
      const bt = node(tenant.key);
      const app = await bt.applications.create({
        name: 'Rotating',
        type: 'private',
        permissions: ['token:read'],
      });
      expect(app).toMatchObject({ name: 'Rotating', type: 'private', permissions: ['token:read'] });
      expect(app.key).toMatch(/^key_/);
      expect((await bt.applications.get(app.id as string)).name).toBe('Rotating');
      const page = await bt.applications.list({ id: app.id });
      expect(page.data.map((a) => a.id)).toEqual([app.id]);
      const updated = await bt.applications.update(app.id as string, {
        name: 'Renamed',
        permissions: ['token:read'],
      });
      expect(updated.name).toBe('Renamed');
      expect((await node(app.key as string).applications.getByKey()).id).toBe(app.id);

      const second = await bt.applicationKeys.create(app.id as string);
      expect(second).toMatchObject({ version: '2', key: expect.stringMatching(/^key_/) });
      expect(second.createdAt).toBeInstanceOf(Date);
      const keys = await bt.applicationKeys.list(app.id as string);
      expect(keys.map((k) => k.version)).toEqual(['1', '2']);
      expect(keys.every((k) => k.key === undefined)).toBe(true);
      expect((await bt.applicationKeys.get(app.id as string, second.id as string)).version).toBe('2');
      const first = keys.find((k) => k.version === '1');
      await bt.applicationKeys.delete(app.id as string, first?.id as string);
      await expect(node(app.key as string).applications.getByKey()).rejects.toMatchObject({
        statusCode: 401,
      });
      expect((await node(second.key as string).applications.getByKey()).id).toBe(app.id);

      const keyless = await bt.applications.create({ name: 'Keyless', type: 'public', createKey: false });
      expect(keyless.key).toBeUndefined();
      expect(await bt.applicationKeys.list(keyless.id as string)).toEqual([]);
      await bt.applications.delete(app.id as string);
      await expect(bt.applications.get(app.id as string)).rejects.toMatchObject({ statusCode: 404 });
    });

    it('permissions.list with application_type and descriptions', async () => {
      const permissions = await node(tenant.key).permissions.list({ applicationType: 'public' });
      expect(permissions.map((p) => p.type).sort()).toEqual([
        'token-intent:create',
        'token:create',
        'token:update',
      ]);
      expect(permissions[0].description).toEqual(expect.any(String));
      expect(permissions[0].applicationTypes).toEqual(['public', 'private']);
    });

    it('tokens: create, get, update, listV2 and searchV2 over cursor pages, tokenize, detokenize, delete', async () => {
      const bt = node(await privateKey());
      const number = cardNumber();
      const card = await bt.tokens.create({
        type: 'card',
        data: cardData({ number }),
        metadata: { customer: 'acme' },
        searchIndexes: ['{{ data.number }}'],
      });
      expect(card).toMatchObject({
        type: 'card',
        containers: ['/pci/high/'],
        metadata: { customer: 'acme' },
      });
      expect((card.data as { number: string }).number).toBe(
        `${'X'.repeat(number.length - 4)}${number.slice(-4)}`,
      );
      expect((await bt.tokens.get(card.id as string)).fingerprint).toBe(card.fingerprint);
      const updated = await bt.tokens.update(card.id as string, { metadata: { customer: 'globex' } });
      expect(updated.metadata).toEqual({ customer: 'globex' });
      for (let i = 0; i < 4; i++) {
        await bt.tokens.create({ type: 'token', data: `value-${i}` });
      }
      const seen: string[] = [];
      const pages = await bt.tokens.listV2({ size: 2 });
      for await (const token of pages) {
        seen.push(token.id as string);
      }
      expect(seen).toHaveLength(5);
      expect(new Set(seen).size).toBe(5);
      expect(seen).toContain(card.id);
      const cards = await bt.tokens.listV2({ type: 'card', metadata: { customer: 'GLOBEX' } });
      expect(cards.data.map((t) => t.id)).toEqual([card.id]);
      const found = await bt.tokens.searchV2({ query: `data:${number}`, size: 1 });
      expect(found.data.map((t) => t.id)).toEqual([card.id]);
      expect(found.hasNextPage()).toBe(false);

      const tokenized = (await bt.tokens.tokenize({ ssn: '123-45-6789' })) as { ssn: string };
      expect(tokenized.ssn).toEqual(expect.any(String));
      const detokenized = await bt.tokens.detokenize({
        number: `{{ ${card.id} | json: '$.number' }}`,
        ssn: `{{ ${tokenized.ssn} }}`,
      });
      expect(detokenized).toEqual({ number, ssn: '123-45-6789' });
      await bt.tokens.delete(card.id as string);
      await expect(bt.tokens.get(card.id as string)).rejects.toMatchObject({ statusCode: 404 });
      // The older privacy placement: a container and a mask decision, as the hosted vault maps it.
      const placed = await bt.tokens.create({
        type: 'card',
        data: { number, expiration_month: 12, expiration_year: 2030 },
        privacy: { classification: 'pii', impactLevel: 'moderate', restrictionPolicy: 'redact' },
      });
      expect([placed.containers, placed.mask]).toEqual([['/pii/moderate/'], undefined]);
      const lowered = await bt.tokens.update(placed.id as string, { privacy: { impactLevel: 'low' } });
      expect(lowered.containers).toEqual(['/pii/low/']);
      await bt.tokens.delete(placed.id as string);
    });

    it('tenants: self get/update/usage, owner, security contact, members update, invitations', async () => {
      const bt = node(tenant.key);
      const self = await bt.tenants.self.get();
      expect(self).toMatchObject({ id: tenant.tenantId, name: 'Sdk' });
      const renamed = await bt.tenants.self.update({ name: 'Sdk Renamed', settings: { region: 'eu' } });
      expect(renamed).toMatchObject({ name: 'Sdk Renamed', settings: { region: 'eu' } });
      const usage = await bt.tenants.self.getUsageReports();
      expect(usage.totalTokens).toEqual(expect.any(Number));
      const owner = await bt.tenants.owner.get();
      expect(owner).toMatchObject({ role: 'OWNER', user: { email: 'owner+sdk@example.com' } });
      expect(owner.createdDate).toBeInstanceOf(Date);
      expect((await bt.tenants.securityContact.update({ email: 'sec@example.com' })).email).toBe(
        'sec@example.com',
      );
      expect((await bt.tenants.securityContact.get()).email).toBe('sec@example.com');

      const invitation = await bt.tenants.invitations.create({ email: 'pat@example.com', role: 'ADMIN' });
      expect(invitation).toMatchObject({ email: 'pat@example.com', role: 'ADMIN', status: 'PENDING' });
      expect((await bt.tenants.invitations.get(invitation.id as string)).email).toBe('pat@example.com');
      expect((await bt.tenants.invitations.list()).data.map((i) => i.id)).toContain(invitation.id);
      expect((await bt.tenants.invitations.resend(invitation.id as string)).status).toBe('PENDING');
      const secret = secretOf(mailer.sent[mailer.sent.length - 1].text);
      const accepted = await ctx.http
        .post('/invitations/accept')
        .send({ token: secret, first_name: 'Pat', last_name: 'Lee' })
        .expect(200);
      const memberId = accepted.body.member.id as string;
      const members = await bt.tenants.members.list();
      const pat = (members.data ?? []).find((m) => m.id === memberId);
      expect(pat?.createdDate).toBeInstanceOf(Date);
      const changed = await bt.tenants.members.update(memberId, { role: 'READ_ONLY' });
      expect(changed.role).toBe('READ_ONLY');
      await bt.tenants.members.delete(memberId);
      const other = await bt.tenants.invitations.create({ email: 'sam@example.com' });
      await bt.tenants.invitations.delete(other.id as string);
      await expect(bt.tenants.invitations.get(other.id as string)).rejects.toMatchObject({ statusCode: 404 });
    });

    it('tenants.self.delete by the owner key: every key stops', async () => {
      const doomed = await ctx.newTenant('SdkDoomed');
      await node(doomed.key).tenants.self.delete();
      await expect(node(doomed.key).tenants.self.get()).rejects.toMatchObject({ statusCode: 401 });
    });
  });

  describe('@basis-theory/basis-theory-js 4.30.2', () => {
    // The SDK reports its errors to a remote log intake: never from a test (sockets go to loopback only).
    beforeAll(() => jsSdkTelemetry.setTelemetryEnabled(false));
    it('tokens: create, retrieve, update, list, search, tokenize, delete', async () => {
      const bt = await js(await privateKey());
      const number = cardNumber();
      const card = await bt.tokens.create({
        type: 'card',
        data: { ...cardData({ number }) },
        searchIndexes: ['{{ data.number }}'],
      });
      expect(card.type).toBe('card');
      expect((await bt.tokens.retrieve(card.id)).id).toBe(card.id);
      const updated = await bt.tokens.update(card.id, { metadata: { k: 'v' } });
      expect(updated.metadata).toEqual({ k: 'v' });
      const listed = await bt.tokens.list({ type: 'card' });
      expect(listed.data.map((t) => t.id)).toEqual([card.id]);
      expect(listed.pagination.totalItems).toBe(1);
      const found = await bt.tokens.search({ query: `data:${number}` });
      expect(found.data.map((t) => t.id)).toEqual([card.id]);
      const tokenized = (await bt.tokenize({ name: 'Jane' })) as { name: string };
      expect(tokenized.name).toEqual(expect.any(String));
      await bt.tokens.delete(card.id);
      await expect(bt.tokens.retrieve(card.id)).rejects.toMatchObject({ status: 404 });
    });

    it('applications, application keys and permissions', async () => {
      const bt = await js(tenant.key);
      const app = await bt.applications.create({
        name: 'Js app',
        type: 'private',
        permissions: ['token:read'],
      });
      expect(app.key).toMatch(/^key_/);
      expect((await bt.applications.retrieve(app.id)).name).toBe('Js app');
      expect((await bt.applications.list({ id: app.id })).data.map((a) => a.id)).toEqual([app.id]);
      expect(
        (await bt.applications.update(app.id, { name: 'Js renamed', permissions: ['token:read'] })).name,
      ).toBe('Js renamed');
      const regenerated = await bt.applications.regenerateKey(app.id);
      expect(regenerated.key).toMatch(/^key_/);
      const key = await bt.applicationKeys.create(app.id);
      expect(key.key).toMatch(/^key_/);
      const keyId = key.id as string;
      const keys = await bt.applicationKeys.get(app.id);
      expect(keys.map((k) => k.id)).toContain(keyId);
      expect((await bt.applicationKeys.getById(app.id, keyId)).id).toBe(keyId);
      await bt.applicationKeys.delete(app.id, keyId);
      expect((await bt.applicationKeys.get(app.id)).map((k) => k.id)).not.toContain(keyId);
      const self = await (await js(regenerated.key as string)).applications.retrieveByKey();
      expect(self.id).toBe(app.id);
      const permissions = await bt.permissions.list({ applicationType: 'private' });
      expect(permissions.map((p) => p.type)).toContain('token:search');
      await bt.applications.delete(app.id);
    });

    it('tenants: retrieve, update, usage report, members, invitations', async () => {
      const bt = await js(tenant.key);
      expect((await bt.tenants.retrieve()).id).toBe(tenant.tenantId);
      expect((await bt.tenants.update({ name: 'Js Tenant' })).name).toBe('Js Tenant');
      const usage = await bt.tenants.retrieveUsageReport();
      expect(usage).toEqual(expect.objectContaining({ tokenReport: expect.any(Object) }));
      const invitation = await bt.tenants.createInvitation({ email: 'kim@example.com' });
      expect(invitation.status).toBe('PENDING');
      expect((await bt.tenants.retrieveInvitation(invitation.id)).email).toBe('kim@example.com');
      expect((await bt.tenants.listInvitations()).data.map((i) => i.id)).toContain(invitation.id);
      expect((await bt.tenants.resendInvitation(invitation.id)).status).toBe('PENDING');
      await bt.tenants.deleteInvitation(invitation.id);
      const members = await bt.tenants.listMembers();
      expect(members.data.map((m) => m.role)).toContain('OWNER');
    });
  });
});
