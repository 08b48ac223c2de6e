import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';
import type { DocumentRow } from './document.entity';

interface Row {
  tenant_id: string;
  id: string;
  content_type: string;
  metadata: Record<string, string>;
  sealed_key: Buffer;
  size: string;
  chunk_count: number;
  created_by: string | null;
  created_at: Date;
}

const COLUMNS =
  'tenant_id, id, content_type, metadata, sealed_key, size, chunk_count, created_by, created_at';

function toDocument(row: Row): DocumentRow {
  return {
    tenantId: row.tenant_id,
    id: row.id,
    contentType: row.content_type,
    metadata: row.metadata,
    sealedKey: row.sealed_key,
    size: Number(row.size),
    chunkCount: row.chunk_count,
    createdBy: row.created_by,
    createdAt: row.created_at,
  };
}

/**
 * Documents and their sealed chunks; every method takes the tenant id first. An upload's row is `uploading`
 * until `complete` marks it done: only complete documents are found.
 */
@Injectable()
export class DocumentsRepository {
  constructor(private readonly db: Database) {}

  async insertUploading(
    tenantId: string,
    id: string,
    sealedKey: Buffer,
    createdBy: string,
    createdAt: Date,
  ): Promise<void> {
    await this.db.execute(
      `INSERT INTO documents (tenant_id, id, state, sealed_key, created_by, created_at)
       VALUES ($1, $2, 'uploading', $3, $4, $5)`,
      [tenantId, id, sealedKey, createdBy, createdAt],
    );
  }

  /** Fails (foreign key) once the upload's row is gone: a cut-off upload stops writing. */
  async insertChunk(tenantId: string, documentId: string, index: number, data: Buffer): Promise<void> {
    await this.db.execute(
      'INSERT INTO document_chunks (tenant_id, document_id, index, data) VALUES ($1, $2, $3, $4)',
      [tenantId, documentId, index, data],
    );
  }

  /** The upload's row made complete, or null when it is gone. */
  async complete(
    tenantId: string,
    id: string,
    fields: { contentType: string; metadata: Record<string, string>; size: number; chunkCount: number },
  ): Promise<DocumentRow | null> {
    const [row] = await this.db.query<Row>(
      `UPDATE documents SET state = 'complete', content_type = $3, metadata = $4::jsonb, size = $5, chunk_count = $6
        WHERE tenant_id = $1 AND id = $2 AND state = 'uploading'
        RETURNING ${COLUMNS}`,
      [tenantId, id, fields.contentType, JSON.stringify(fields.metadata), fields.size, fields.chunkCount],
    );
    return row === undefined ? null : toDocument(row);
  }

  async find(tenantId: string, id: string): Promise<DocumentRow | null> {
    const [row] = await this.db.query<Row>(
      `SELECT ${COLUMNS} FROM documents WHERE tenant_id = $1 AND id = $2 AND state = 'complete'`,
      [tenantId, id],
    );
    return row === undefined ? null : toDocument(row);
  }

  /** The sealed chunks `from` to `to` (inclusive) of a document, in order. */
  async chunks(tenantId: string, documentId: string, from: number, to: number): Promise<Buffer[]> {
    const rows = await this.db.query<{ data: Buffer }>(
      `SELECT data FROM document_chunks
        WHERE tenant_id = $1 AND document_id = $2 AND index BETWEEN $3 AND $4 ORDER BY index`,
      [tenantId, documentId, from, to],
    );
    return rows.map((r) => r.data);
  }

  /** False when the tenant has no such complete document. Its chunks go with it (the foreign key cascades). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return (
      (await this.db.execute(
        `DELETE FROM documents WHERE tenant_id = $1 AND id = $2 AND state = 'complete'`,
        [tenantId, id],
      )) > 0
    );
  }

  /** Drops an unfinished upload and whatever chunks it wrote. */
  async discardUpload(tenantId: string, id: string): Promise<void> {
    await this.db.execute(`DELETE FROM documents WHERE tenant_id = $1 AND id = $2 AND state = 'uploading'`, [
      tenantId,
      id,
    ]);
  }

  /** Uploads begun before `before` and never completed (their process ended mid-way): deleted, counted. */
  deleteStaleUploads(before: Date): Promise<number> {
    return this.db.execute(`DELETE FROM documents WHERE state = 'uploading' AND created_at < $1`, [before]);
  }
}
