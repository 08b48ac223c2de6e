import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Code reactors (the hosted vault's current form): a reactor runs either a formula or its own code, never
 * both, and a code reactor may carry a runtime (image, sandbox modules, timeout). Proxies may turn off
 * detokenization of the request body.
 */
export class CodeReactors1764300000000 implements MigrationInterface {
  name = 'CodeReactors1764300000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE reactors ALTER COLUMN formula_id DROP NOT NULL');
    await q.query('ALTER TABLE reactors ADD COLUMN code text');
    await q.query('ALTER TABLE reactors ADD COLUMN runtime jsonb');
    await q.query(
      'ALTER TABLE reactors ADD CONSTRAINT reactors_formula_or_code CHECK ((formula_id IS NULL) <> (code IS NULL))',
    );
    await q.query('ALTER TABLE proxies ADD COLUMN disable_detokenization boolean NOT NULL DEFAULT false');
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE proxies DROP COLUMN disable_detokenization');
    await q.query('DELETE FROM reactors WHERE formula_id IS NULL');
    await q.query('ALTER TABLE reactors DROP CONSTRAINT reactors_formula_or_code');
    await q.query('ALTER TABLE reactors DROP COLUMN runtime');
    await q.query('ALTER TABLE reactors DROP COLUMN code');
    await q.query('ALTER TABLE reactors ALTER COLUMN formula_id SET NOT NULL');
  }
}
