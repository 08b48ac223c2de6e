'use strict';
/**
 * The floor rows of issue 39 (bench/hot-paths.js): the same requests as POST /tokens (card), GET /tokens/<id>
 * (reveal) and POST /proxy (3 expressions), at the same concurrency, sent to bench/floor-server.js (node:http)
 * or bench/nest-floor.js (bare NestJS: create, reveal, proxy at 16 connections) instead of the vault. PostgreSQL only: a floor is a
 * second process on the vault's database.
 *
 * The list floor sends the list row's request (GET /tokens?metadata.k=v<n>) to the floor server's list route
 * (bench/list-floor.js), on the list row's seeded tokens.
 *
 * floorScenarios(setups) takes the vault rows' own setups and request builders, so both sides send the same
 * bodies: { revealApplication, cardRequest, revealTokens, proxySetup, listTokens, listRequest }. Returns
 * { create, nestCreate, reveal, nestReveal, revealAlone, nestRevealAlone, proxy, proxyAlone, nestProxy, list }.
 */
const { FLOOR_CONNECTIONS, NAMES } = require('./hot-paths');

/**
 * The proxy floor at `connections` on `server` ('proxy-floor' or 'nest-proxy-floor'): the body the vault
 * forwards (card numbers in clear), no decryption.
 */
function floorProxy(name, connections, proxySetup, server = 'proxy-floor') {
  return {
    name,
    database: 'postgres',
    connections,
    group: 'proxy floors',
    server,
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

/**
 * GETs of a path `pathOf()` picks anew for every request, by the application `key`, the tenant named for the
 * floor (the vault ignores the header).
 */
function randomGet({ key, tenantId }, pathOf) {
  return {
    requests: [
      {
        method: 'GET',
        headers: { 'bt-api-key': key, 'floor-tenant-id': tenantId },
        setupRequest: (req) => ({ ...req, path: pathOf() }),
      },
    ],
  };
}

/** Reveals of random tokens among `ids`. */
function revealRequest(ctx, setup) {
  return randomGet(setup, () => `/tokens/${setup.ids[Math.floor(Math.random() * setup.ids.length)]}`);
}

function floorScenarios({
  revealApplication,
  cardRequest,
  revealTokens,
  proxySetup,
  listTokens,
  listRequest,
}) {
  const shared = { database: 'postgres', connections: FLOOR_CONNECTIONS, group: 'floors' };
  const create = { ...shared, server: 'floor', setup: revealApplication, request: cardRequest };
  const reveal = { ...shared, server: 'floor', setup: revealTokens, request: revealRequest };
  // At 1 connection, latency from every response's own time: the reveal floor is also the react row's
  // "audited read floor".
  const alone = { connections: 1, preciseLatency: true };
  return {
    create: { ...create, name: NAMES.FLOOR_CREATE },
    nestCreate: { ...create, name: NAMES.NEST_CREATE, server: 'nest-floor' },
    reveal: { ...reveal, name: NAMES.FLOOR_REVEAL },
    nestReveal: { ...reveal, name: NAMES.NEST_REVEAL, server: 'nest-floor' },
    revealAlone: { ...reveal, ...alone, name: NAMES.FLOOR_REVEAL_1 },
    nestRevealAlone: { ...reveal, ...alone, name: NAMES.NEST_REVEAL_1, server: 'nest-floor' },
    proxy: floorProxy(NAMES.FLOOR_PROXY, FLOOR_CONNECTIONS, proxySetup),
    proxyAlone: floorProxy(NAMES.FLOOR_PROXY_1, 1, proxySetup),
    nestProxy: floorProxy(NAMES.NEST_PROXY, FLOOR_CONNECTIONS, proxySetup, 'nest-proxy-floor'),
    list: { ...shared, name: NAMES.FLOOR_LIST, server: 'floor', setup: listTokens, request: listRequest },
  };
}

module.exports = { floorScenarios, randomGet };
