import { TenantCipher } from '../../src/crypto/tenant-cipher.service';
import { CLIENT_KEY_SEAL } from '../../src/client-keys/client-keys.service';
import { recordsOf } from '../support/audit';
import { TestContext, TestTenant } from '../support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/** Issue 41 item 3: /keys, client encryption keys whose private half never leaves the vault in the clear. */
describe('client encryption keys', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Keys');
    other = await ctx.newTenant('Other');
  });
  afterAll(() => ctx.close());

  const create = (key: string, body: object = {}) => ctx.http.post('/keys').set('BT-API-KEY', key).send(body);
  const get = (key: string, id: string) => ctx.http.get(`/keys/${id}`).set('BT-API-KEY', key);
  const list = (key: string) => ctx.http.get('/keys').set('BT-API-KEY', key);
  const remove = (key: string, id: string) => ctx.http.delete(`/keys/${id}`).set('BT-API-KEY', key);

  it('creates a key answering its public key once, then gets, lists and deletes it', async () => {
    const before = Date.now();
    const created = await create(tenant.key).expect(201);
    expect(Object.keys(created.body).sort()).toEqual(['expires_at', 'key_id', 'public_key_pem']);
    expect(created.body.key_id).toMatch(UUID);
    const pem = created.body.public_key_pem as string;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/]{43}=\n-----END PUBLIC KEY-----$/);
    expect(Buffer.from(pem.split('\n')[1], 'base64')).toHaveLength(32);
    const expires = Date.parse(created.body.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + YEAR_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + YEAR_MS);

    const id = created.body.key_id as string;
    expect((await get(tenant.key, id).expect(200)).body).toEqual({
      key_id: id,
      expires_at: created.body.expires_at,
    });
    expect((await list(tenant.key).expect(200)).body).toContainEqual({
      key_id: id,
      expires_at: created.body.expires_at,
    });
    await remove(tenant.key, id).expect(204);
    await get(tenant.key, id).expect(404);
    await remove(tenant.key, id).expect(404);
    expect((await list(tenant.key).expect(200)).body.map((k: { key_id: string }) => k.key_id)).not.toContain(
      id,
    );
  });

  it('takes an expires_at in the future and at most a year away', async () => {
    const at = new Date(Date.now() + 24 * 3600_000).toISOString();
    expect((await create(tenant.key, { expires_at: at }).expect(201)).body.expires_at).toBe(at);
    const past = await create(tenant.key, { expires_at: new Date(Date.now() - 60_000).toISOString() });
    expect(past.status).toBe(400);
    expect(past.body.errors).toEqual({ expires_at: ['must be in the future'] });
    const far = await create(tenant.key, {
      expires_at: new Date(Date.now() + YEAR_MS + 86_400_000).toISOString(),
    });
    expect(far.body.errors).toEqual({ expires_at: ['must be at most one year away'] });
    expect((await create(tenant.key, { expires_at: 'tomorrow' })).status).toBe(400);
    expect((await create(tenant.key, { public_key_pem: 'mine' })).status).toBe(400);
  });

  it('keeps the private key sealed: not in the row, the answers or the logs', async () => {
    const created = await create(tenant.key).expect(201);
    const id = created.body.key_id as string;
    const [row]: Record<string, unknown>[] = await ctx.dataSource.query(
      'SELECT * FROM client_encryption_keys WHERE tenant_id = $1 AND id = $2',
      [tenant.tenantId, id],
    );
    const pkcs8 = (await ctx
      .get(TenantCipher)
      .openJson(CLIENT_KEY_SEAL, tenant.tenantId, id, row.private_key as Buffer)) as string;
    const der = Buffer.from(pkcs8, 'base64');
    // PKCS#8 of X25519: a 16-byte prefix, then the 32-byte private key.
    expect(der.subarray(0, 16).toString('hex')).toBe('302e020100300506032b656e04220420');
    const secret = der.subarray(16);
    const forms = [secret.toString('hex'), secret.toString('base64'), secret.toString('base64url'), pkcs8];
    const stored = Buffer.from(row.private_key as Buffer);
    expect(stored.includes(secret)).toBe(false);
    expect(stored.includes(der)).toBe(false);
    const answers = JSON.stringify([
      created.body,
      (await get(tenant.key, id)).body,
      (await list(tenant.key)).body,
      row,
    ]);
    for (const form of forms) {
      expect(answers).not.toContain(form);
      expect(ctx.logs.join('\n')).not.toContain(form);
    }
  });

  it('audits creation and deletion as the application that did them', async () => {
    const id = (await create(tenant.key).expect(201)).body.key_id as string;
    await remove(tenant.key, id).expect(204);
    for (const operation of ['create', 'delete']) {
      expect(await recordsOf(ctx, tenant.tenantId, operation, id)).toEqual([
        expect.objectContaining({
          entity_type: 'client_encryption_key',
          actor_type: 'application',
          outcome: 'success',
        }),
      ]);
    }
  });

  it("never shows or deletes another tenant's key", async () => {
    const id = (await create(tenant.key).expect(201)).body.key_id as string;
    await get(other.key, id).expect(404);
    await remove(other.key, id).expect(404);
    expect((await list(other.key).expect(200)).body.map((k: { key_id: string }) => k.key_id)).not.toContain(
      id,
    );
    await get(tenant.key, id).expect(200);
  });

  it('needs keys:create, keys:read and keys:delete, which only management applications hold', async () => {
    const id = (await create(tenant.key).expect(201)).body.key_id as string;
    const reader = await ctx.newApplication(tenant, 'management', ['keys:read']);
    await create(reader.key).expect(403);
    await remove(reader.key, id).expect(403);
    await get(reader.key, id).expect(200);
    const writer = await ctx.newApplication(tenant, 'management', ['keys:create', 'keys:delete']);
    await list(writer.key).expect(403);
    await get(writer.key, id).expect(403);
    const backend = await ctx.newApplication(tenant, 'private', ['token:create', 'token:read']);
    await create(backend.key).expect(403);
    await list(backend.key).expect(403);
    for (const type of ['private', 'public']) {
      const refused = await ctx.http
        .post('/applications')
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'Browser', type, permissions: ['keys:create'] });
      expect(refused.status).toBe(400);
    }
    await create('key_not-a-key').expect(401);
    await get(tenant.key, 'not-a-uuid').expect(400);
  });
});
