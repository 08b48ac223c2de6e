import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A token. `data` holds only AES-256-GCM ciphertext; once a token is deleted or purged every column that
 * derives from its data is cleared and the row stays as an audit tombstone (`deleted_at` set).
 */
@Entity('tokens')
export class Token {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  id: string;

  @Column('text')
  type: string;

  @Column('bytea', { nullable: true })
  data: Buffer | null;

  /** Data-key version of `data` (also inside the blob): lets re-encryption find old rows by index. */
  @Column('int', { name: 'data_key_version', nullable: true })
  dataKeyVersion: number | null;

  @Column('jsonb', { nullable: true })
  mask: unknown;

  @Column('text', { nullable: true })
  fingerprint: string | null;

  @Column('text', { name: 'fingerprint_expression', nullable: true })
  fingerprintExpression: string | null;

  @Column('text', { array: true })
  containers: string[];

  @Column('jsonb', { nullable: true })
  metadata: Record<string, string> | null;

  /** Metadata with lower-cased values: what the case-insensitive `metadata.<key>` filters match (GIN index). */
  @Column('jsonb', { name: 'metadata_ci', nullable: true })
  metadataCi: Record<string, string> | null;

  @Column('jsonb', { name: 'search_indexes', nullable: true })
  searchIndexes: string[] | null;

  @Column('boolean', { name: 'deduplicate_token', nullable: true })
  deduplicateToken: boolean | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy: string | null;

  @Column('timestamptz', { name: 'created_at' })
  createdAt: Date;

  @Column('uuid', { name: 'modified_by', nullable: true })
  modifiedBy: string | null;

  @Column('timestamptz', { name: 'modified_at', nullable: true })
  modifiedAt: Date | null;

  @Column('timestamptz', { name: 'deleted_at', nullable: true })
  deletedAt: Date | null;
}
