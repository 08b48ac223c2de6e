import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BasisTheory, BasisTheoryClient } from '@basis-theory/node-sdk';
import { TestContext, TestTenant } from '../support/test-app';

/** @basis-theory/node-sdk's documents.* (upload, get, data.get, delete), unchanged, against the vault. */
describe('node-sdk documents', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let base: string;
  let client: BasisTheoryClient;
  const dir = mkdtempSync(join(tmpdir(), 'tv-sdk-documents-'));

  beforeAll(async () => {
    ctx = await TestContext.create();
    await ctx.vault.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`;
    tenant = await ctx.newTenant('SdkDocs');
    const management = new BasisTheoryClient({ apiKey: tenant.key, baseUrl: base, maxRetries: 0 });
    const app = await management.applications.create({
      name: 'Files',
      type: 'private',
      permissions: ['documents:create', 'documents:read', 'documents:delete'],
    });
    client = new BasisTheoryClient({ apiKey: app.key as string, baseUrl: base, maxRetries: 0 });
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await ctx.close();
  });

  it('uploads a Blob with metadata, gets it, downloads it as binary and deletes it', async () => {
    const uploaded = await client.documents.upload({
      document: new Blob(['Hello World'], { type: 'text/plain' }),
      request: { metadata: { 'attribute 1': 'value 1' } },
    });
    expect(uploaded).toEqual({
      id: expect.any(String),
      tenantId: tenant.tenantId,
      metadata: { 'attribute 1': 'value 1' },
      contentType: 'text/plain',
      createdBy: expect.any(String),
      createdAt: expect.any(Date),
    });
    const id = uploaded.id as string;
    expect(await client.documents.get(id)).toEqual(uploaded);
    const data = await client.documents.data.get(id);
    expect(Buffer.from(await data.arrayBuffer()).toString()).toBe('Hello World');
    await client.documents.delete(id);
    await expect(client.documents.get(id)).rejects.toBeInstanceOf(BasisTheory.NotFoundError);
  });

  it('uploads a file stream with a file name and content type, and streams it back', async () => {
    const bytes = randomBytes(700_000);
    const path = join(dir, 'scan.pdf');
    writeFileSync(path, bytes);
    const uploaded = await client.documents.upload({
      document: { data: createReadStream(path), filename: 'scan.pdf', contentType: 'application/pdf' },
    });
    expect(uploaded.contentType).toBe('application/pdf');
    expect(uploaded.metadata).toEqual({});
    const response = await client.documents.data.get(uploaded.id as string);
    const parts: Buffer[] = [];
    const reader = response.stream().getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      parts.push(Buffer.from(next.value));
    }
    expect(Buffer.compare(Buffer.concat(parts), bytes)).toBe(0);
    await client.documents.delete(uploaded.id as string);
  });

  it('answers with the errors the SDK types: 400 without a document, 403 without the permission', async () => {
    await expect(client.documents.upload({ request: { metadata: {} } })).rejects.toBeInstanceOf(
      BasisTheory.BadRequestError,
    );
    const management = new BasisTheoryClient({ apiKey: tenant.key, baseUrl: base, maxRetries: 0 });
    await expect(management.documents.upload({ document: Buffer.from('x') })).rejects.toBeInstanceOf(
      BasisTheory.ForbiddenError,
    );
  });
});
