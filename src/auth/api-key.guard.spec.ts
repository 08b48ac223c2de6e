import { Controller, ExecutionContext, Get } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { IncomingHttpHeaders } from 'node:http';
import { AuthenticatedRequest, Public, RequirePermission } from '../access/decorators';
import type { Principal } from '../access/principal';
import type { ApplicationPrincipals } from '../applications/application-principals.service';
import { ApiError } from '../common/api-error';
import { hashSecret } from '../crypto/secrets';
import type { RateLimits } from '../rate-limits/rate-limits.service';
import type { SessionPrincipals } from '../sessions/session-principals.service';
import { ApiKeyGuard } from './api-key.guard';
import { Authenticator } from './authenticator.service';

@Controller()
class Routes {
  @Public()
  @Get('open')
  open(): void {}

  @RequirePermission('token:create')
  @Get('create')
  create(): void {}

  @RequirePermission('token:create', 'token:read')
  @Get('both')
  both(): void {}

  @Get('any')
  anyKey(): void {}
}

const PRIVATE_KEY = 'key_private';
const MANAGEMENT_KEY = 'key_management';
const SESSION_KEY = 'key_sess_session';
const principals: Record<string, Principal> = {
  [PRIVATE_KEY]: {
    tenantId: 't1',
    applicationId: 'a1',
    applicationType: 'private',
    permissions: new Set(['token:create']),
    rules: [],
  },
  [MANAGEMENT_KEY]: {
    tenantId: 't1',
    applicationId: 'a2',
    applicationType: 'management',
    permissions: new Set(['application:read']),
    rules: [],
  },
};

/** Only the one method the guard reaches: lookup by the key's hash, as ApplicationPrincipals answers it. */
const byHash = new Map(Object.entries(principals).map(([key, principal]) => [hashSecret(key), principal]));
const applications = {
  authenticateHash: (keyHash: string) => Promise.resolve(byHash.get(keyHash) ?? null),
} as unknown as ApplicationPrincipals;

/** Session keys are looked up here, and only here. */
const SESSION: Principal = {
  tenantId: 't1',
  applicationId: 'a3',
  applicationType: 'public',
  permissions: new Set(['token:read']),
  rules: [],
  session: { id: 's1', authorizedBy: 'a1' },
};
const sessions = {
  authenticateHash: (keyHash: string) =>
    Promise.resolve(keyHash === hashSecret(SESSION_KEY) ? SESSION : null),
} as unknown as SessionPrincipals;

/** Limits that never refuse: the limits have their own tests (test/rate-limits). */
const limits = {
  addressBlocked: () => false,
  countUnauthenticated: () => Promise.resolve(),
  admit: () => Promise.resolve(),
} as unknown as RateLimits;

const guard = new ApiKeyGuard(new Reflector(), new Authenticator(applications, limits, sessions));

function contextFor(
  handler: keyof Routes,
  headers: IncomingHttpHeaders,
): [ExecutionContext, AuthenticatedRequest] {
  const request = { headers } as AuthenticatedRequest;
  const context = {
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => ({}) }),
  } as unknown as ExecutionContext;
  return [context, request];
}

async function refusal(handler: keyof Routes, headers: IncomingHttpHeaders): Promise<ApiError> {
  const [context] = contextFor(handler, headers);
  const error: unknown = await guard.canActivate(context).then(
    () => null,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('ApiKeyGuard', () => {
  it('lets a @Public() route through without a key and sets no principal', async () => {
    const [context, request] = contextFor('open', {});
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(request.principal).toBeUndefined();
  });

  it('answers 401 without a key, with an empty key, or with a key of the wrong type', async () => {
    expect((await refusal('anyKey', {})).status).toBe(401);
    expect((await refusal('anyKey', { 'bt-api-key': '' })).status).toBe(401);
    expect((await refusal('anyKey', { 'bt-api-key': [PRIVATE_KEY, PRIVATE_KEY] })).status).toBe(401);
  });

  it('answers 401 naming an invalid key for one no application holds', async () => {
    const error = await refusal('create', { 'bt-api-key': 'key_unknown' });
    expect([error.status, error.detail]).toEqual([401, 'The BT-API-KEY is not valid.']);
  });

  it('answers 403 naming the permission an application lacks, whatever its type', async () => {
    const management = await refusal('create', { 'bt-api-key': MANAGEMENT_KEY });
    expect([management.status, management.detail]).toEqual([
      403,
      'The application lacks the permission token:create.',
    ]);
    const partial = await refusal('both', { 'bt-api-key': PRIVATE_KEY });
    expect(partial.detail).toBe('The application lacks the permission token:read.');
  });

  it('sets the principal when the key is valid and holds every required permission', async () => {
    const [context, request] = contextFor('create', { 'bt-api-key': PRIVATE_KEY });
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(request.principal).toBe(principals[PRIVATE_KEY]);
  });

  it('needs only a valid key on a route that names no permission', async () => {
    const [context, request] = contextFor('anyKey', { 'bt-api-key': MANAGEMENT_KEY });
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(request.principal?.applicationId).toBe('a2');
  });

  it('looks a session key up among sessions, and an application key never there', async () => {
    const [context, request] = contextFor('anyKey', { 'bt-api-key': SESSION_KEY });
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(request.principal).toBe(SESSION);
    byHash.set(hashSecret('key_sess_stolen'), principals[PRIVATE_KEY]);
    expect((await refusal('anyKey', { 'bt-api-key': 'key_sess_stolen' })).status).toBe(401);
  });
});
