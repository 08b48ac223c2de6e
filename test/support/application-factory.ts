import type { Response } from 'supertest';
import type { TestContext, TestTenant } from './test-app';

/** `key_` and at least 32 base58 characters (no 0, O, I, l). */
export const API_KEY_FORMAT = /^key_[1-9A-HJ-NP-Za-km-z]{32,}$/;

export type Body = Record<string, unknown>;

/** A valid create-application body; override or drop (`undefined`) any field. */
export function applicationBody(overrides: Body = {}): Body {
  return {
    name: 'Checkout backend',
    type: 'private',
    permissions: ['token:create', 'token:read'],
    ...overrides,
  };
}

/** A valid access rule; override any field. */
export function accessRule(overrides: Body = {}): Body {
  return {
    description: 'Read cards masked',
    priority: 1,
    container: '/pci/',
    transform: 'mask',
    permissions: ['token:read'],
    ...overrides,
  };
}

export function withoutField(body: Body, field: string): Body {
  const { [field]: _removed, ...rest } = body;
  return rest;
}

/** POST /applications with the tenant's management key; the response is returned whatever its status. */
export async function createApplication(
  ctx: TestContext,
  tenant: TestTenant,
  body: Body = applicationBody(),
): Promise<Response> {
  return ctx.http.post('/applications').set('BT-API-KEY', tenant.key).send(body);
}

/** A value that looks like a secret, unique per call, for asserting it is never echoed or logged. */
export function secretLooking(label: string): string {
  return `sk_live_${label}_${Math.random().toString(36).slice(2)}Zq9`;
}
