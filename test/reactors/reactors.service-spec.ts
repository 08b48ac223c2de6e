import { randomUUID } from 'node:crypto';
import { Principal } from '../../src/access/principal';
import { Clock } from '../../src/common/clock';
import { AppConfig } from '../../src/config/app-config';
import { TenantCipher } from '../../src/crypto/tenant-cipher.service';
import { Events } from '../../src/events/events';
import { EventsRepository } from '../../src/events/events.repository';
import { ReactorFormulasRepository } from '../../src/reactor-formulas/reactor-formulas.repository';
import { ReactorFormulasService } from '../../src/reactor-formulas/reactor-formulas.service';
import { ReactorCache } from '../../src/reactors/reactor-cache';
import { ReactorsRepository } from '../../src/reactors/reactors.repository';
import { ReactorsService } from '../../src/reactors/reactors.service';
import { localChangeFeed } from '../support/local-change-feed';
import { AuditDouble, bindAnyApplication, testPrincipal } from '../support/service-doubles';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';
import { tenantDataKeys } from '../support/tenant-data-keys';

const code = (answer: string): string =>
  `module.exports = async function () { return { raw: '${answer}' }; };`;

/**
 * ReactorsService on its real repository, the real formulas service and outbox, without the app: what an
 * invocation loads (the hot `reactor-load` statement), and that a change to a reactor or its formula
 * reaches the next load through the cache.
 */
describe('ReactorsService', () => {
  let db: TestDataSource;
  let reactors: ReactorsService;
  let formulas: ReactorFormulasService;
  let acme: Principal;
  let other: Principal;
  const audit = new AuditDouble();
  const cipher = new TenantCipher(tenantDataKeys().keys);

  beforeAll(async () => {
    db = await openTestDataSource();
    const data = db.dataLayer;
    const clock = new Clock();
    formulas = new ReactorFormulasService(
      new ReactorFormulasRepository(data),
      data,
      bindAnyApplication,
      clock,
      audit.service,
    );
    reactors = new ReactorsService(
      new ReactorsRepository(data),
      data,
      formulas,
      bindAnyApplication,
      cipher,
      clock,
      { sandboxTimeoutMs: 10_000 } as AppConfig,
      audit.service,
      new Events(new EventsRepository(data), clock),
      new ReactorCache(localChangeFeed(), formulas),
    );
    acme = testPrincipal(await db.insertTenant('Acme'));
    other = testPrincipal(await db.insertTenant('Other'));
  });

  afterAll(() => db.close());

  it('loads a code reactor with its configuration in clear, and the code of its latest change', async () => {
    const created = await reactors.create(acme, {
      name: 'code',
      code: code('one'),
      configuration: { KEY: 'secret' },
      runtime: { timeout: 3 },
    });
    expect(await reactors.load(acme.tenantId, created.id)).toMatchObject({
      code: code('one'),
      parameters: null,
      configuration: { KEY: 'secret' },
      timeoutMs: 3000,
    });
    await reactors.patch(acme, created.id, { code: code('two') });
    expect((await reactors.load(acme.tenantId, created.id)).code).toBe(code('two'));
    await expect(reactors.load(other.tenantId, created.id)).rejects.toMatchObject({ status: 404 });
    await reactors.delete(acme, created.id);
    await expect(reactors.load(acme.tenantId, created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("loads a formula reactor with its formula's code, the latest after the formula changes", async () => {
    const formulaBody = (answer: string) => ({
      name: 'formula',
      type: 'private' as const,
      code: code(answer),
      configuration: [],
      request_parameters: [{ name: 'card', type: 'string' as const }],
    });
    const formula = await formulas.create(acme, formulaBody('one'));
    const reactor = await reactors.create(acme, {
      name: 'r',
      formula: { id: formula.id },
      configuration: {},
    });
    expect(await reactors.load(acme.tenantId, reactor.id)).toMatchObject({
      code: code('one'),
      parameters: [{ name: 'card', type: 'string' }],
    });
    await formulas.update(acme, formula.id, formulaBody('two'));
    expect((await reactors.load(acme.tenantId, reactor.id)).code).toBe(code('two'));
  });

  it("does not run another tenant's formula", async () => {
    const theirs = await formulas.create(other, {
      name: 'theirs',
      type: 'private',
      code: code('theirs'),
      configuration: [],
      request_parameters: [],
    });
    await expect(
      reactors.create(acme, { name: 'r', formula: { id: theirs.id }, configuration: {} }),
    ).rejects.toMatchObject({ status: 400 });
    // A row that names it anyway (written behind the API's back) loads no formula.
    const id = randomUUID();
    await db.dataLayer.execute(
      'INSERT INTO reactors (tenant_id, id, name, formula_id, configuration) VALUES ($1, $2, $3, $4, $5)',
      [
        acme.tenantId,
        id,
        'r',
        theirs.id,
        await cipher.sealJson('reactor-configuration', acme.tenantId, id, {}),
      ],
    );
    await expect(reactors.load(acme.tenantId, id)).rejects.toThrow(/Reactor formula/);
  });

  it('changes nothing when the audit record cannot be written', async () => {
    const kept = await reactors.create(acme, { name: 'kept', code: code('kept') });
    await audit.failing(async () => {
      await expect(
        reactors.update(acme, kept.id, { name: 'renamed', code: code('new') }),
      ).rejects.toMatchObject({
        status: 503,
      });
      await expect(reactors.delete(acme, kept.id)).rejects.toMatchObject({ status: 503 });
    });
    expect(await reactors.get(acme, kept.id)).toMatchObject({ name: 'kept', code: code('kept') });
  });
});
