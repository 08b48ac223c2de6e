import { randomInt } from 'node:crypto';
import type { AccessRule, Transform } from '../../src/access/access-rules';
import type { Permission } from '../../src/access/permissions';
import { luhnCheckDigit } from '../../src/common/luhn';
import type { TestApplication, TestContext } from './test-app';

/** Luhn check, deliberately apart from (and unlike) src/common/luhn.ts: the oracle for numbers the service makes. */
export function luhnValid(number: string): boolean {
  if (!/^\d+$/.test(number)) {
    return false;
  }
  let sum = 0;
  [...number].reverse().forEach((digit, i) => {
    const weighted = Number(digit) * (i % 2 === 1 ? 2 : 1);
    sum += weighted > 9 ? weighted - 9 : weighted;
  });
  return sum % 10 === 0;
}

/** A random Luhn-valid card number, distinct per call (15 random digits). */
export function cardNumber(prefix = '4', length = 16): string {
  let payload = prefix;
  while (payload.length < length - 1) {
    payload += String(randomInt(10));
  }
  return payload + luhnCheckDigit(payload);
}

/** The same number with a wrong check digit. */
export function badLuhn(number: string): string {
  const check = Number(number.slice(-1));
  return number.slice(0, -1) + String((check + 1) % 10);
}

export interface CardData {
  number: string;
  expiration_month?: number;
  expiration_year?: number;
  cvc?: string;
}

export function cardData(overrides: Partial<CardData> = {}): CardData {
  return { number: cardNumber(), expiration_month: 12, expiration_year: 2030, ...overrides };
}

/** Valid ABA routing numbers (checksum holds). */
export const ROUTING_NUMBERS = ['021000021', '011000015', '026009593', '121000358'];

export interface BankData {
  routing_number: string;
  account_number: string;
}

export function bankData(overrides: Partial<BankData> = {}): BankData {
  let account = '';
  for (let i = 0; i < 12; i++) {
    account += String(randomInt(10));
  }
  return { routing_number: ROUTING_NUMBERS[0], account_number: account, ...overrides };
}

export function rule(
  container: string,
  transform: Transform,
  permissions: Permission[],
  priority = 1,
): AccessRule {
  return { description: null, priority, container, transform, permissions };
}

export const ALL_TOKEN_PERMISSIONS: Permission[] = [
  'token:create',
  'token:read',
  'token:update',
  'token:delete',
];

/** Supertest calls on /tokens and /tokenize with one API key; every call must be awaited. */
export function tokensApi(ctx: TestContext, key: string) {
  const path = (id: string): string => `/tokens/${encodeURIComponent(id)}`;
  return {
    create: (body: object) => ctx.http.post('/tokens').set('BT-API-KEY', key).send(body),
    get: (id: string) => ctx.http.get(path(id)).set('BT-API-KEY', key),
    list: (query = '') => ctx.http.get(`/tokens${query}`).set('BT-API-KEY', key),
    patch: (id: string, body: object) =>
      ctx.http
        .patch(path(id))
        .set('BT-API-KEY', key)
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify(body)),
    delete: (id: string) => ctx.http.delete(path(id)).set('BT-API-KEY', key),
    search: (body: object) => ctx.http.post('/tokens/search').set('BT-API-KEY', key).send(body),
    /** A JSON object or array; a top-level string needs an explicit JSON content type. */
    tokenize: (body: object) => ctx.http.post('/tokenize').set('BT-API-KEY', key).send(body),
  };
}

export type TokensApi = ReturnType<typeof tokensApi>;

/** How the API writes instants: ISO 8601 with an offset. */
export const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A private application with the given rules (or plain permissions when none) and its /tokens client. */
export async function tokenApp(
  ctx: TestContext,
  tenant: Parameters<TestContext['newApplication']>[0],
  rules: AccessRule[] = [],
  permissions: Permission[] = ALL_TOKEN_PERMISSIONS,
): Promise<TestApplication & { api: TokensApi }> {
  const app = await ctx.newApplication(tenant, 'private', permissions, rules);
  return { ...app, api: tokensApi(ctx, app.key) };
}

/** Raw row of a token, straight from the database. */
export async function rawToken(
  ctx: TestContext,
  tenantId: string,
  id: string,
): Promise<Record<string, unknown>> {
  const rows: Record<string, unknown>[] = await ctx.dataSource.query(
    'SELECT * FROM tokens WHERE tenant_id = $1 AND id = $2',
    [tenantId, id],
  );
  expect(rows).toHaveLength(1);
  return rows[0];
}

/** Token rows of the tenant, or of the whole database, deleted ones included: what a request stored. */
export async function countTokens(ctx: TestContext, tenantId?: string): Promise<number> {
  const rows: { n: number }[] =
    tenantId === undefined
      ? await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens')
      : await ctx.dataSource.query('SELECT count(*)::int AS n FROM tokens WHERE tenant_id = $1', [tenantId]);
  return rows[0].n;
}
