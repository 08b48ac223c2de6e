import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';

/**
 * A client encryption key (migration ClientEncryptionKeys): an X25519 pair whose public half browsers
 * encrypt token data to. `privateKey` is the PKCS#8 private key, sealed under the tenant's data key.
 */
@Entity('client_encryption_keys')
export class ClientKey extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  /** The raw 32-byte X25519 public key, base64url. */
  @Column('text', { name: 'public_key' })
  publicKey: string;

  @Column('bytea', { name: 'private_key' })
  privateKey: Buffer;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt: Date;
}
