'use strict';
/**
 * Scenarios that measure what hostile requests cost everybody else (issue 19 item 6): `GET /health` while
 * other connections send the most expensive expressions a public key can write (bench/scenarios.js
 * describes the scenario fields; `background` is run-specific, see bench/run.js).
 */
// The service's own list of hostile templates, from the build `npm run bench` makes first.
const { HOSTILE_TEMPLATES } = require('../dist/src/expressions/hostile-templates');

const HOSTILE_HEALTH = 'GET /health (20 connections sending hostile expressions)';
const HOSTILE_CONNECTIONS = 20;
/** What the templates that read `data` work on: the largest string they are written for. */
const HOSTILE_DATA = 'x'.repeat(100_000);

/** A public application: the least a caller needs to have its expressions rendered. */
async function publicKey(ctx) {
  const app = await ctx.createApplication({
    name: 'bench public',
    type: 'public',
    permissions: ['token:create'],
  });
  return app.key;
}

/** Every hostile template as a fingerprint expression, a search index and an id alias, in turn. */
function hostileRequests(key) {
  const headers = { 'bt-api-key': key, 'content-type': 'application/json' };
  const bodies = HOSTILE_TEMPLATES.flatMap((template) => [
    { type: 'token', data: HOSTILE_DATA, fingerprint_expression: template },
    { type: 'token', data: HOSTILE_DATA, search_indexes: [template] },
    { type: 'token', data: HOSTILE_DATA, id: `{{ "a" }}${template}` },
  ]);
  return {
    requests: bodies.map((body) => ({
      method: 'POST',
      path: '/tokens',
      headers,
      body: JSON.stringify(body),
    })),
  };
}

module.exports = [
  {
    name: HOSTILE_HEALTH,
    group: 'hostile',
    setup: publicKey,
    request: { method: 'GET', path: '/health' },
    background: (_ctx, key) => hostileRequests(key),
    backgroundConnections: HOSTILE_CONNECTIONS,
    // The hostile load keeps the one event loop busy, so /health queues behind up to 20 refusals of a few
    // milliseconds each: its p99 grows with that queue, but stays far below the 0.5-1 s that one hostile
    // expression alone held the loop for before work was counted (issue 19 item 6).
    targets: [
      {
        label: 'p99',
        measure: (row) => row.latency_p99_ms,
        op: '<=',
        threshold: 100,
        unit: ' ms',
      },
      {
        label: 'p99 vs GET /health p99 alone',
        measure: (row, byName) =>
          byName['GET /health'] && byName['GET /health'].latency_p99_ms > 0
            ? row.latency_p99_ms / byName['GET /health'].latency_p99_ms
            : null,
        op: '<=',
        threshold: 50,
        unit: '×',
      },
    ],
  },
];
