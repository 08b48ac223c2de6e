import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents (files) and their encrypted chunks. A document's data key is sealed under the tenant's data key
 * like token data; each chunk is sealed with it (AES-256-GCM, bound to the document and the chunk's place).
 * An upload writes its row as `uploading` and its chunks in short statements, then marks it `complete`: only
 * complete documents are served, and uploads a crash left behind are deleted by the scheduled purge.
 * A tenant's own management application may now delegate document access as it delegates token access.
 */
export class Documents1765400000000 implements MigrationInterface {
  name = 'Documents1765400000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE documents (
      tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
      id uuid NOT NULL,
      state text NOT NULL CHECK (state IN ('uploading', 'complete')),
      content_type text,
      metadata jsonb,
      sealed_key bytea NOT NULL,
      size bigint,
      chunk_count integer,
      created_by uuid,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (tenant_id, id)
    )`);
    await q.query(`CREATE INDEX documents_uploading ON documents (created_at) WHERE state = 'uploading'`);
    await q.query(`CREATE TABLE document_chunks (
      tenant_id uuid NOT NULL,
      document_id uuid NOT NULL,
      index integer NOT NULL CHECK (index >= 0),
      data bytea NOT NULL,
      PRIMARY KEY (tenant_id, document_id, index),
      FOREIGN KEY (tenant_id, document_id) REFERENCES documents (tenant_id, id) ON DELETE CASCADE
    )`);
    await q.query(
      `UPDATE applications SET rules = $1::jsonb WHERE type = 'management' AND rules = $2::jsonb`,
      [JSON.stringify([DELEGATE_ALL_WITH_DOCUMENTS]), JSON.stringify([DELEGATE_ALL])],
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE applications SET rules = $1::jsonb WHERE type = 'management' AND rules = $2::jsonb`,
      [JSON.stringify([DELEGATE_ALL]), JSON.stringify([DELEGATE_ALL_WITH_DOCUMENTS])],
    );
    await q.query('DROP TABLE document_chunks');
    await q.query('DROP TABLE documents');
  }
}

// Spelled out rather than imported: a migration must keep meaning what it meant when it was written.
const TOKEN_ACCESS = [
  'token:create',
  'token:update',
  'token:read',
  'token:delete',
  'token:use',
  'token:search',
];
const DELEGATE_ALL = {
  description: 'May grant any token access to the applications it manages',
  priority: 1,
  container: '/',
  transform: 'reveal',
  permissions: TOKEN_ACCESS,
};
const DELEGATE_ALL_WITH_DOCUMENTS = {
  description: 'May grant any token or document access to the applications it manages',
  priority: 1,
  container: '/',
  transform: 'reveal',
  permissions: [...TOKEN_ACCESS, 'documents:create', 'documents:read', 'documents:delete'],
};
