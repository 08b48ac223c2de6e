import type { TestContext, TestTenant } from './test-app';

export type Body = Record<string, unknown>;

export const ECHO_CODE = 'module.exports = async function (req) { return { raw: req.args }; };';

/** A valid private formula body; override any field. */
export function formulaBody(overrides: Body = {}): Body {
  return {
    name: 'Echo',
    description: 'Returns its arguments',
    type: 'private',
    code: ECHO_CODE,
    configuration: [{ name: 'currency', description: 'ISO 4217', type: 'string' }],
    request_parameters: [{ name: 'amount', type: 'number', optional: true }],
    ...overrides,
  };
}

export function reactorsApi(ctx: TestContext, tenant: TestTenant | { key: string }) {
  const key = tenant.key;
  return {
    createFormula: (body: Body) => ctx.http.post('/reactor-formulas').set('BT-API-KEY', key).send(body),
    updateFormula: (id: string, body: Body) =>
      ctx.http.put(`/reactor-formulas/${id}`).set('BT-API-KEY', key).send(body),
    getFormula: (id: string) => ctx.http.get(`/reactor-formulas/${id}`).set('BT-API-KEY', key),
    listFormulas: (query = '') => ctx.http.get(`/reactor-formulas${query}`).set('BT-API-KEY', key),
    deleteFormula: (id: string) => ctx.http.delete(`/reactor-formulas/${id}`).set('BT-API-KEY', key),
    create: (body: Body) => ctx.http.post('/reactors').set('BT-API-KEY', key).send(body),
    update: (id: string, body: Body) => ctx.http.put(`/reactors/${id}`).set('BT-API-KEY', key).send(body),
    get: (id: string) => ctx.http.get(`/reactors/${id}`).set('BT-API-KEY', key),
    list: (query = '') => ctx.http.get(`/reactors${query}`).set('BT-API-KEY', key),
    delete: (id: string) => ctx.http.delete(`/reactors/${id}`).set('BT-API-KEY', key),
    react: (id: string, body: unknown, apiKey = key) =>
      ctx.http
        .post(`/reactors/${id}/react`)
        .set('BT-API-KEY', apiKey)
        .send(body as object),
  };
}

/** A formula and a reactor built from it; returns both ids. */
export async function newReactor(
  ctx: TestContext,
  tenant: TestTenant,
  formula: Body = {},
  reactor: Body = {},
): Promise<{ formulaId: string; reactorId: string }> {
  const api = reactorsApi(ctx, tenant);
  const f = await api.createFormula(formulaBody(formula));
  if (f.status !== 201) {
    throw new Error(`formula not created: ${f.status} ${JSON.stringify(f.body)}`);
  }
  const r = await api.create({
    name: 'Reactor',
    configuration: { currency: 'USD' },
    formula: { id: f.body.id },
    ...reactor,
  });
  if (r.status !== 201) {
    throw new Error(`reactor not created: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return { formulaId: f.body.id as string, reactorId: r.body.id as string };
}

export type ReactorKind = 'formula' | 'code';

/** A reactor of either kind running `code` with no request parameters (every argument reaches the code). */
export async function reactorRunning(
  ctx: TestContext,
  tenant: TestTenant,
  kind: ReactorKind,
  code: string,
): Promise<string> {
  if (kind === 'formula') {
    return (await newReactor(ctx, tenant, { code, request_parameters: [] })).reactorId;
  }
  const r = await reactorsApi(ctx, tenant).create({ name: 'Code reactor', code });
  if (r.status !== 201) {
    throw new Error(`reactor not created: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return r.body.id as string;
}
