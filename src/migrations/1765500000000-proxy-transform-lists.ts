import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A proxy's `request_transforms` / `response_transforms`: lists of transforms run in order (code, mask,
 * append_json, append_text, append_header), as the hosted vault's plural fields. Null when a proxy has none;
 * the singular code columns stay for `request_transform` / `response_transform`.
 */
export class ProxyTransformLists1765500000000 implements MigrationInterface {
  name = 'ProxyTransformLists1765500000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE proxies
      ADD COLUMN request_transforms jsonb CONSTRAINT proxies_request_transforms_array CHECK (jsonb_typeof(request_transforms) = 'array'),
      ADD COLUMN response_transforms jsonb CONSTRAINT proxies_response_transforms_array CHECK (jsonb_typeof(response_transforms) = 'array')`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE proxies DROP COLUMN request_transforms, DROP COLUMN response_transforms');
  }
}
