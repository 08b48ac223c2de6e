import { MigrationInterface, QueryRunner } from 'typeorm';
import { CARD_INSIGHTS } from '../reactor-formulas/official/card-insights';
import { CARD_NORMALIZER } from '../reactor-formulas/official/card-normalizer';

/** The official formulas every tenant sees from the start. The operator adds more with formula:create-official. */
export class OfficialFormulas1763780460000 implements MigrationInterface {
  name = 'OfficialFormulas1763780460000';

  public async up(q: QueryRunner): Promise<void> {
    for (const f of [CARD_INSIGHTS, CARD_NORMALIZER]) {
      await q.query(
        `INSERT INTO reactor_formulas
           (id, tenant_id, name, description, type, status, icon, code, configuration, request_parameters, created_at)
         VALUES ($1, NULL, $2, $3, 'official', 'verified', NULL, $4, $5, $6, now())
         ON CONFLICT (id) DO NOTHING`,
        [
          f.id,
          f.name,
          f.description,
          f.code,
          JSON.stringify(f.configuration),
          JSON.stringify(f.request_parameters),
        ],
      );
    }
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM reactor_formulas WHERE id = ANY($1)', [
      [CARD_INSIGHTS.id, CARD_NORMALIZER.id],
    ]);
  }
}
