'use strict';
// The react rows' setups and requests: a warm echo reactor, and the flooding tenant of the fairness rows.
const { performance } = require('node:perf_hooks');
const { cardBody } = require('./card-body');
const { REACT_CODE, REACT_PARAMETERS } = require('./sandbox-code');
const { RUN, jsonHeaders } = require('./scenario-support');

/** A warm reactor returning { raw: args }, one card token to detokenize, and a caller with token:use. */
async function reactSetup(ctx) {
  if (!ctx.cache.has('reactor')) {
    ctx.cache.set(
      'reactor',
      (async () => {
        const caller = await ctx.createApplication({
          name: 'bench react caller',
          type: 'private',
          permissions: ['token:create', 'token:use'],
          rules: [],
        });
        const card = await ctx.api('POST', '/tokens', cardBody(), caller.key);
        const formula = await ctx.api('POST', '/reactor-formulas', {
          name: 'bench echo',
          type: 'private',
          code: REACT_CODE,
          configuration: [],
          request_parameters: REACT_PARAMETERS,
        });
        const reactor = await ctx.api('POST', '/reactors', {
          name: 'bench echo',
          configuration: {},
          formula: { id: formula.id },
        });
        const path = `/reactors/${reactor.id}/react`;
        return { key: caller.key, path, card: card.id, tenantId: card.tenant_id };
      })(),
    );
  }
  return ctx.cache.get('reactor');
}

/** How long each of the flooding tenant's runs holds a sandbox worker (busy, on the worker's CPU). */
const SLOW_REACT_MS = 200;
/** The flooding tenant's connections: more than its share of workers and of queued runs together. */
const FLOOD_CONNECTIONS = 64;
const REACT_B_IDLE = 'POST /reactors/<id>/react (tenant B idle, 1 connection)';
const REACT_B_FLOODED = `POST /reactors/<id>/react (tenant B, 1 connection, tenant A flooding ${SLOW_REACT_MS} ms reactors)`;

/**
 * Tenant A of the fairness rows: a second tenant (made with the `tenant:create` operator command, which has no
 * API route), a reactor whose every run busy-waits SLOW_REACT_MS in the sandbox, and a caller allowed to run
 * it. Checks once that a run does take that long. Tenant B is the default tenant, with reactSetup's reactor.
 */
async function floodingTenantSetup(ctx) {
  if (!ctx.cache.has('floodingTenant')) {
    ctx.cache.set(
      'floodingTenant',
      (async () => {
        const output = await ctx.cli([
          'tenant:create',
          '--name',
          `bench flooding tenant ${RUN}`,
          '--owner-email',
          `bench-flood-${RUN}@token-vault.local`,
          '--json',
        ]);
        const tenant = JSON.parse(output.trim().split('\n').pop());
        const caller = await ctx.api(
          'POST',
          '/applications',
          { name: 'bench flood caller', type: 'private', permissions: ['token:use'], rules: [] },
          tenant.key,
        );
        const formula = await ctx.api(
          'POST',
          '/reactor-formulas',
          {
            name: 'bench slow',
            type: 'private',
            code:
              'module.exports = async function () { ' +
              `const end = Date.now() + ${SLOW_REACT_MS}; while (Date.now() < end) {} return { raw: { slow: true } }; };`,
            configuration: [],
            request_parameters: [],
          },
          tenant.key,
        );
        const reactor = await ctx.api(
          'POST',
          '/reactors',
          { name: 'bench slow', configuration: {}, formula: { id: formula.id } },
          tenant.key,
        );
        const path = `/reactors/${reactor.id}/react`;
        const started = performance.now();
        await ctx.api('POST', path, { args: {} }, caller.key);
        const ms = performance.now() - started;
        if (ms < SLOW_REACT_MS) {
          throw new Error(
            `tenant A's slow reactor answered in ${ms.toFixed(1)} ms, expected ≥ ${SLOW_REACT_MS} ms`,
          );
        }
        ctx.log(`tenant ${tenant.tenant_id} (A): one slow react takes ${ms.toFixed(1)} ms`);
        return { key: caller.key, path, tenant: tenant.tenant_id };
      })(),
    );
  }
  return ctx.cache.get('floodingTenant');
}

function reactRequest(ctx, data) {
  return {
    method: 'POST',
    path: data.path,
    headers: jsonHeaders(data.key),
    body: JSON.stringify({ args: { card: `{{ ${data.card} }}` } }),
  };
}

module.exports = {
  reactSetup,
  reactRequest,
  floodingTenantSetup,
  FLOOD_CONNECTIONS,
  REACT_B_IDLE,
  REACT_B_FLOODED,
};
