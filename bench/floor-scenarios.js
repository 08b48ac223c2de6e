'use strict';
/**
 * The floor rows of issue 22 (bench/hot-paths.js): the same requests as POST /tokens (card), GET /tokens/<id>
 * (reveal) and POST /proxy (3 tokens), at the same concurrency, sent to bench/floor-server.js instead of the
 * vault. PostgreSQL only: the floor is a second process on the vault's database.
 *
 * floorScenarios(setups) takes the vault rows' own setups and request builders, so both sides send the same
 * bodies: { revealApplication, cardRequest, revealTokens, proxySetup }. Returns { create, reveal, proxy,
 * proxyAlone }.
 */
const { FLOOR_CONNECTIONS, NAMES } = require('./hot-paths');

/** The proxy floor at `connections`: the body the vault forwards (card numbers in clear), no decryption. */
function floorProxy(name, connections, proxySetup) {
  return {
    name,
    database: 'postgres',
    connections,
    group: 'proxy floors',
    server: 'proxy-floor',
    preciseLatency: true,
    setup: proxySetup,
    request: (ctx, { headers, ids, tenantId, directBody }) => ({
      method: 'POST',
      path: '/proxy/charge',
      headers: { ...headers, 'floor-token-ids': ids.join(','), 'floor-tenant-id': tenantId },
      body: directBody,
    }),
  };
}

function floorScenarios({ revealApplication, cardRequest, revealTokens, proxySetup }) {
  const shared = { database: 'postgres', connections: FLOOR_CONNECTIONS };
  return {
    create: {
      ...shared,
      name: NAMES.FLOOR_CREATE,
      group: 'floors',
      server: 'floor',
      setup: revealApplication,
      request: cardRequest,
    },
    reveal: {
      ...shared,
      name: NAMES.FLOOR_REVEAL,
      group: 'floors',
      server: 'floor',
      setup: revealTokens,
      request: (ctx, { key, ids, tenantId }) => ({
        requests: [
          {
            method: 'GET',
            headers: { 'bt-api-key': key, 'floor-tenant-id': tenantId },
            setupRequest: (req) => ({
              ...req,
              path: `/tokens/${ids[Math.floor(Math.random() * ids.length)]}`,
            }),
          },
        ],
      }),
    },
    proxy: floorProxy(NAMES.FLOOR_PROXY, FLOOR_CONNECTIONS, proxySetup),
    // Its p50 less the direct call's is the floor of the proxy's added p50 at 1 connection (bench/hot-paths.js).
    proxyAlone: floorProxy(NAMES.FLOOR_PROXY_1, 1, proxySetup),
  };
}

module.exports = { floorScenarios };
