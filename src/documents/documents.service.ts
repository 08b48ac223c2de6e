import { Inject, Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { transformFor, writeTransform } from '../access/access';
import type { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { Database } from '../database/database.service';
import { IDEMPOTENCY_HEADER } from '../idempotency/idempotency.service';
import { DOCUMENT_KEY_BYTES, fixedChunks, openChunk, sealChunk } from './document-chunks';
import { DOCUMENT_CONTAINERS, DocumentRow } from './document.entity';
import { readDocumentRequest } from './document-request';
import { DocumentsRepository } from './documents.repository';
import { DocumentDto } from './dto/document.dto';
import { FILE_PART, readUpload, tooLarge } from './multipart-upload';

/** The sealing kind of a document's data key (TenantCipher). */
const DOCUMENT_KEY_SEAL = 'document';
/** Sealed chunks a download reads per statement. */
const READ_BATCH = 4;
/** Room in a request beyond the file for the multipart framing and the request part. */
const MULTIPART_ALLOWANCE = 128 * 1024;

/** A document's data, decrypted as it is read. */
export interface DocumentData {
  contentType: string;
  size: number;
  stream: Readable;
}

/** Documents (files): uploaded and downloaded as streams, each chunk sealed under the document's own key. */
@Injectable()
export class DocumentsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    private readonly documents: DocumentsRepository,
    private readonly cipher: TenantCipher,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /**
   * Stores the `document` part chunk by chunk as it arrives (the row stays `uploading`, invisible, until the
   * end), then completes it with the `request` part's metadata. A refused or cut-off upload is discarded.
   */
  async upload(principal: Principal, req: IncomingMessage): Promise<DocumentDto> {
    if (writeTransform(principal, 'documents:create', DOCUMENT_CONTAINERS) === null) {
      throw noRule('documents:create');
    }
    if (req.headers[IDEMPOTENCY_HEADER] !== undefined) {
      // The chunks are stored as they arrive, each on its own: no one transaction could keep the answer
      // with the document, and holding one open for a client-paced upload would hold a connection with it.
      throw ApiError.field(
        'BT-IDEMPOTENCY-KEY',
        'is not taken on POST /documents: a retry uploads a second document (delete the first by its id)',
      );
    }
    const max = this.config.documentMaxBytes;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max + MULTIPART_ALLOWANCE) {
      throw tooLarge(max);
    }
    const { tenantId } = principal;
    const id = randomUUID();
    const key = randomBytes(DOCUMENT_KEY_BYTES);
    const sealedKey = await this.cipher.sealJson(DOCUMENT_KEY_SEAL, tenantId, id, key.toString('base64'));
    await this.documents.insertUploading(tenantId, id, sealedKey, principal.applicationId, this.clock.now());
    try {
      const parts = await readUpload(req, max, async (stream, contentType) => {
        let size = 0;
        let chunkCount = 0;
        for await (const chunk of fixedChunks(stream, max, () => tooLarge(max))) {
          await this.documents.insertChunk(tenantId, id, chunk.index, sealChunk(key, tenantId, id, chunk));
          size += chunk.data.length;
          chunkCount++;
        }
        return { contentType, size, chunkCount };
      });
      if (parts.file === undefined) {
        throw ApiError.field(FILE_PART, `is required: send the file as a multipart part named ${FILE_PART}`);
      }
      const stored = { ...parts.file, metadata: readDocumentRequest(parts.request) };
      return await this.db.transaction(async () => {
        const row = await this.documents.complete(tenantId, id, stored);
        if (row === null) {
          throw new Error('the upload row vanished before it was completed');
        }
        await this.audit.record(auditEvent(principal, 'document', id, 'create', 'Document uploaded'));
        return toDto(row);
      });
    } catch (err) {
      await this.documents.discardUpload(tenantId, id);
      throw err;
    } finally {
      key.fill(0);
    }
  }

  async get(principal: Principal, id: string): Promise<DocumentDto> {
    if (transformFor(principal, 'documents:read', DOCUMENT_CONTAINERS) === null) {
      throw noRule('documents:read');
    }
    const row = await this.find(principal.tenantId, id);
    await this.audit.record(auditEvent(principal, 'document', id, 'read', 'Document read'));
    return toDto(row);
  }

  /** The data, read and decrypted a few chunks at a time as the response is written. */
  async download(principal: Principal, id: string): Promise<DocumentData> {
    if (transformFor(principal, 'documents:read', DOCUMENT_CONTAINERS) !== 'reveal') {
      throw ApiError.forbidden(
        'The access rule for documents:read does not reveal document data (transform reveal).',
      );
    }
    const row = await this.find(principal.tenantId, id);
    const opened = await this.cipher.openJson(DOCUMENT_KEY_SEAL, row.tenantId, row.id, row.sealedKey);
    const key = Buffer.from(opened as string, 'base64');
    let first: Buffer[];
    try {
      // Read before the answer starts, so a document deleted meanwhile is a 404 and a chunk that fails
      // authentication a 500, both in the common format; later batches can only cut the stream off.
      first = await this.openBatch(row, key, 0);
      await this.audit.record(auditEvent(principal, 'document', id, 'download', 'Document data downloaded'));
    } catch (err) {
      key.fill(0);
      throw err;
    }
    return {
      contentType: row.contentType,
      size: row.size,
      stream: Readable.from(this.plaintext(row, key, first), { objectMode: false }),
    };
  }

  async delete(principal: Principal, id: string): Promise<void> {
    if (transformFor(principal, 'documents:delete', DOCUMENT_CONTAINERS) === null) {
      throw noRule('documents:delete');
    }
    await this.db.transaction(async () => {
      if (!(await this.documents.delete(principal.tenantId, id))) {
        throw ApiError.notFound('Document');
      }
      await this.audit.record(auditEvent(principal, 'document', id, 'delete', 'Document deleted'));
    });
  }

  /**
   * Uploads a process left unfinished (it ended mid-way, SIGKILL included): deleted once older than twice
   * the longest a request may run, so an upload still under way is never one of them.
   */
  purgeStaleUploads(now: Date): Promise<number> {
    return this.documents.deleteStaleUploads(
      new Date(now.getTime() - 2 * this.config.server.requestTimeoutMs),
    );
  }

  private async find(tenantId: string, id: string): Promise<DocumentRow> {
    const row = await this.documents.find(tenantId, id);
    if (row === null) {
      throw ApiError.notFound('Document');
    }
    return row;
  }

  private async *plaintext(row: DocumentRow, key: Buffer, first: Buffer[]): AsyncGenerator<Buffer> {
    try {
      yield* first;
      for (let from = READ_BATCH; from < row.chunkCount; from += READ_BATCH) {
        yield* await this.openBatch(row, key, from);
      }
    } finally {
      key.fill(0);
    }
  }

  /** The plaintext of up to READ_BATCH chunks from `from`; a 404 when they are gone (deleted meanwhile). */
  private async openBatch(row: DocumentRow, key: Buffer, from: number): Promise<Buffer[]> {
    const to = Math.min(from + READ_BATCH, row.chunkCount) - 1;
    const sealed = await this.documents.chunks(row.tenantId, row.id, from, to);
    if (sealed.length !== to - from + 1) {
      throw ApiError.notFound('Document');
    }
    return sealed.map((data, i) => {
      const index = from + i;
      return openChunk(key, row.tenantId, row.id, index, index === row.chunkCount - 1, data);
    });
  }
}

function noRule(permission: Permission): ApiError {
  return ApiError.forbidden(`No access rule grants ${permission} on the documents container.`);
}

function toDto(row: DocumentRow): DocumentDto {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    metadata: row.metadata,
    content_type: row.contentType,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}
