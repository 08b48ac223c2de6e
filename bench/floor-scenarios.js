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
 * The react floor (bench/react-floor.js) gets the react rows' reactions, at 16 connections and at 1, once its
 * setup has checked that it answers one of them with the vault's bytes.
 *
 * floorScenarios(setups) takes the vault rows' own setups and request builders, so both sides send the same
 * bodies: { revealApplication, cardRequest, revealTokens, proxySetup, listTokens, listRequest, reactSetup,
 * reactRequest }. Returns { create, nestCreate, reveal, nestReveal, revealAlone, nestRevealAlone, proxy,
 * proxyAlone, nestProxy, list, react, reactAlone }.
 */
const { FLOOR_CONNECTIONS, NAMES } = require('./hot-path-names');

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

/**
 * The react rows' setup for the react floor: their reactor and card (`reactSetup`), and one reaction sent to
 * the vault (ctx.baseUrl) and to the floor (ctx.floorUrl), whose answers must be the same status and bytes.
 */
async function checkedReactFloor(ctx, reactSetup, reactRequest) {
  const data = await reactSetup(ctx);
  const { method, path, headers, body } = reactRequest(ctx, data);
  const send = async (origin) => {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: { ...headers, 'floor-tenant-id': data.tenantId },
      body,
    });
    return `${response.status} ${await response.text()}`;
  };
  const [vault, floor] = [await send(ctx.baseUrl), await send(ctx.floorUrl)];
  if (vault !== floor || !vault.startsWith('200 ')) {
    throw new Error(`the react floor answered ${floor.length} bytes unlike the vault's ${vault.length}`);
  }
  ctx.log(`the react floor answers the vault's ${vault.length - 4} bytes`);
  return data;
}

function floorScenarios({
  revealApplication,
  cardRequest,
  revealTokens,
  proxySetup,
  listTokens,
  listRequest,
  reactSetup,
  reactRequest,
}) {
  const shared = { database: 'postgres', connections: FLOOR_CONNECTIONS, group: 'floors' };
  const create = { ...shared, server: 'floor', setup: revealApplication, request: cardRequest };
  const reveal = { ...shared, server: 'floor', setup: revealTokens, request: revealRequest };
  // At 1 connection, latency from every response's own time: the reveal floor is also the react row's
  // "audited read floor".
  const alone = { connections: 1, preciseLatency: true };
  const react = {
    ...shared,
    server: 'react-floor',
    setup: (ctx) => checkedReactFloor(ctx, reactSetup, reactRequest),
    request: (ctx, data) => {
      const request = reactRequest(ctx, data);
      return { ...request, headers: { ...request.headers, 'floor-tenant-id': data.tenantId } };
    },
  };
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
    react: { ...react, name: NAMES.FLOOR_REACT_16, connections: FLOOR_CONNECTIONS },
    reactAlone: { ...react, ...alone, name: NAMES.FLOOR_REACT_1 },
  };
}

module.exports = { floorScenarios, randomGet };
