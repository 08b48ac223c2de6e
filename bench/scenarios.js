'use strict';
/**
 * Benchmark scenarios, run in this order by `npm run bench` (bench/run.js). Add an entry per feature.
 *
 * A scenario is
 *   name      shown in the tables and in bench/results/latest.json
 *   baseline  true for the reference every ratio is measured against (GET /health; at most one)
 *   setup     optional async (ctx) => data: prepares what the requests need through the HTTP API,
 *             e.g. `await ctx.api('POST', '/applications', {...})`; its result is passed to `request`
 *   request   an autocannon request definition, or (ctx, data) => definition:
 *               { method, path, headers, body }   one request repeated (an object body is sent as JSON)
 *               { requests: [{ method, path, headers, body, setupRequest(req, context) }, ...] }
 *             a sequence per connection; `setupRequest` may change each request (vary a body, a path).
 *
 * ctx: { baseUrl, key (the management key), auth (BT-API-KEY header of the management key),
 *        api(method, path, body?, key?) -> parsed JSON (throws on a non-2xx answer),
 *        createApplication({ name, type, permissions, rules }) -> { id, key } }
 */
module.exports = [
  {
    name: 'GET /health',
    baseline: true,
    request: { method: 'GET', path: '/health' },
  },
  {
    name: 'GET /applications/key',
    request: (ctx) => ({ method: 'GET', path: '/applications/key', headers: ctx.auth }),
  },
];
