import { Column, Entity, PrimaryColumn } from 'typeorm';
import { Audited } from '../database/audited';

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
