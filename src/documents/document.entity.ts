/** A document's row: what GET /documents/{id} shows, and what its data is stored under. */
export interface DocumentRow {
  tenantId: string;
  id: string;
  contentType: string;
  metadata: Record<string, string>;
  sealedKey: Buffer;
  size: number;
  chunkCount: number;
  createdBy: string | null;
  createdAt: Date;
}

/** The container every document sits in, for access rules (a rule on `/` or `/documents/` covers it). */
export const DOCUMENT_CONTAINERS: readonly string[] = ['/documents/'];
