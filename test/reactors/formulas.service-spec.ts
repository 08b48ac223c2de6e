import { randomUUID } from 'node:crypto';
import { Principal } from '../../src/access/principal';
import { Clock } from '../../src/common/clock';
import { ReactorFormulaBodyDto } from '../../src/reactor-formulas/dto/reactor-formula.dto';
import { ReactorFormulasRepository } from '../../src/reactor-formulas/reactor-formulas.repository';
import { ReactorFormulasService } from '../../src/reactor-formulas/reactor-formulas.service';
import { AuditDouble, bindAnyApplication, testPrincipal } from '../support/service-doubles';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

const body = (name: string, type: 'private' | 'official' = 'private'): ReactorFormulaBodyDto => ({
  name,
  type,
  code: 'module.exports = async function (req) { return { raw: req.args }; };',
  configuration: [],
  request_parameters: [],
});

/** ReactorFormulasService on its real repository, without the app: visibility, the in-use rule, atomicity. */
describe('ReactorFormulasService', () => {
  let db: TestDataSource;
  const audit = new AuditDouble();
  let formulas: ReactorFormulasService;
  let acme: Principal;
  let other: Principal;
  const changed: string[] = [];

  beforeAll(async () => {
    db = await openTestDataSource();
    formulas = new ReactorFormulasService(
      new ReactorFormulasRepository(db.dataLayer),
      db.dataLayer,
      bindAnyApplication,
      new Clock(),
      audit.service,
    );
    formulas.onChange((id) => {
      expect(db.dataLayer.inTransaction).toBe(true);
      changed.push(id);
      return Promise.resolve();
    });
    acme = testPrincipal(await db.insertTenant('Acme'));
    other = testPrincipal(await db.insertTenant('Other'));
  });

  afterAll(() => db.close());

  beforeEach(() => {
    changed.length = 0;
  });

  it("shows a tenant its own formulas and the official ones, never another tenant's", async () => {
    const official = await formulas.createOfficial(body('Official', 'official'));
    const own = await formulas.create(acme, body('Own'));
    const theirs = await formulas.create(other, body('Theirs'));
    expect((await formulas.get(acme, own.id)).name).toBe('Own');
    expect((await formulas.get(acme, official.id)).type).toBe('official');
    await expect(formulas.get(acme, theirs.id)).rejects.toMatchObject({ status: 404 });
    // Newest first; the migrations' official formulas come after these.
    const page = await formulas.list(acme, { page: 1, size: 100 });
    expect(page.data.slice(0, 2).map((f) => f.name)).toEqual(['Own', 'Official']);
    expect(page.data.map((f) => f.name)).not.toContain('Theirs');
    expect(page.pagination.total_items).toBe(page.data.length);
    expect((await formulas.list(acme, { page: 1, size: 20, name: 'Offic*' })).data).toHaveLength(1);
    await expect(formulas.update(acme, official.id, body('Mine now'))).rejects.toMatchObject({ status: 403 });
  });

  it('refuses to delete a formula reactors use, and deletes it once none does', async () => {
    const formula = await formulas.create(acme, body('Used'));
    const reactorId = randomUUID();
    await db.dataLayer.execute(
      `INSERT INTO reactors (tenant_id, id, name, formula_id, configuration) VALUES ($1, $2, 'r', $3, '\\x00')`,
      [acme.tenantId, reactorId, formula.id],
    );
    await expect(formulas.delete(acme, formula.id)).rejects.toMatchObject({ status: 409 });
    await db.dataLayer.execute('DELETE FROM reactors WHERE tenant_id = $1 AND id = $2', [
      acme.tenantId,
      reactorId,
    ]);
    await formulas.delete(acme, formula.id);
    expect(changed).toEqual([formula.id]);
    expect(audit.recorded.slice(-1)).toEqual(['reactor_formula:delete']);
    await expect(formulas.get(acme, formula.id)).rejects.toMatchObject({ status: 404 });
  });

  it('changes nothing when the audit record cannot be written', async () => {
    const formula = await formulas.create(acme, body('Kept'));
    await audit.failing(async () => {
      await expect(formulas.update(acme, formula.id, body('Renamed'))).rejects.toMatchObject({ status: 503 });
      await expect(formulas.delete(acme, formula.id)).rejects.toMatchObject({ status: 503 });
      await expect(formulas.create(acme, body('Never'))).rejects.toMatchObject({ status: 503 });
    });
    expect((await formulas.get(acme, formula.id)).name).toBe('Kept');
    expect((await formulas.list(acme, { page: 1, size: 20, name: 'Never' })).data).toEqual([]);
  });
});
