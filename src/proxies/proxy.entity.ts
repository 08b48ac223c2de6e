import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';
import type { StoredTransform } from './dto/proxy-transform.dto';

/** A configured proxy. `key` and `configuration` are sealed (see the migration); `keyHash` routes requests. */
@Entity('proxies')
export class Proxy extends Audited {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;

  @Column('text')
  name: string;

  @Column('text', { name: 'key_hash' })
  keyHash: string;

  @Column('bytea')
  key: Buffer;

  @Column('text', { name: 'destination_url' })
  destinationUrl: string;

  @Column('text', { name: 'request_transform_code', nullable: true })
  requestTransformCode: string | null;

  @Column('text', { name: 'response_transform_code', nullable: true })
  responseTransformCode: string | null;

  /** The listed transforms of each side (`request_transforms`), run in order; null when not set. */
  @Column('jsonb', { name: 'request_transforms', nullable: true })
  requestTransforms: StoredTransform[] | null;

  @Column('jsonb', { name: 'response_transforms', nullable: true })
  responseTransforms: StoredTransform[] | null;

  @Column('uuid', { name: 'application_id', nullable: true })
  applicationId: string | null;

  @Column('bytea', { nullable: true })
  configuration: Buffer | null;

  @Column('boolean', { name: 'require_auth' })
  requireAuth: boolean;

  /** true: the request body is forwarded as sent, token expressions included. */
  @Column('boolean', { name: 'disable_detokenization', default: false })
  disableDetokenization: boolean;
}
