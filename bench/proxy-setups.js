'use strict';
// The /proxy rows' setup and requests, through the proxy vault and straight to the HTTPS echo server.
const { cardBody } = require('./card-body');
const { FLOOR_CONNECTIONS } = require('./hot-path-names');

const PROXY_CONNECTIONS = FLOOR_CONNECTIONS;
const DIRECT_N = `direct HTTPS echo (${PROXY_CONNECTIONS} connections)`;
const PROXY_TOKENS = 2;

/**
 * On the proxy vault: a caller with token:create and token:use, two card tokens, and the two bodies: the one
 * sent to /proxy with three expressions (both numbers and the first card's expiry month: two token rows read,
 * as issue 39's floor reads), and the one sent straight to the echo server with the values in clear (what the
 * vault forwards). Checks once, before anything is measured, that the destination receives the real card
 * numbers through the proxy.
 */
async function proxySetup(ctx) {
  if (!ctx.cache.has('proxy')) {
    ctx.cache.set(
      'proxy',
      (async () => {
        const caller = await ctx.createApplication({
          name: 'bench proxy caller',
          type: 'private',
          permissions: ['token:create', 'token:use'],
          rules: [],
        });
        const cards = [];
        const ids = [];
        let tenantId = null;
        for (let i = 0; i < PROXY_TOKENS; i += 1) {
          const body = cardBody();
          const token = await ctx.api('POST', '/tokens', body, caller.key);
          cards.push(body.data);
          ids.push(token.id);
          tenantId = token.tenant_id;
        }
        const expected = {
          cards: cards.map((card) => card.number),
          month: cards[0].expiration_month,
          amount: 1000,
        };
        const proxiedBody = JSON.stringify({
          cards: ids.map((id) => `{{ ${id} | json: '$.number' }}`),
          month: `{{ ${ids[0]} | json: '$.expiration_month' }}`,
          amount: 1000,
        });
        const directBody = JSON.stringify(expected);
        const headers = {
          'bt-api-key': caller.key,
          'bt-proxy-url': ctx.echo.proxyUrl,
          'content-type': 'application/json',
        };
        const response = await fetch(`${ctx.baseUrl}/proxy/charge`, {
          method: 'POST',
          headers,
          body: proxiedBody,
        });
        const text = await response.text();
        let echoed = null;
        try {
          echoed = JSON.parse(text);
        } catch {
          // reported below
        }
        if (
          response.status !== 200 ||
          echoed?.path !== '/charge' ||
          JSON.stringify(echoed?.body) !== JSON.stringify(expected)
        ) {
          throw new Error(
            `POST /proxy/charge to ${ctx.echo.proxyUrl} did not deliver the card numbers: expected the echo of ` +
              `${JSON.stringify(expected)} at /charge, got ${response.status} ${text.slice(0, 1000)}`,
          );
        }
        if (echoed.bytes !== Buffer.byteLength(directBody)) {
          ctx.log(
            `note: the destination received ${echoed.bytes} bytes through the proxy, the direct body has ` +
              `${Buffer.byteLength(directBody)}`,
          );
        }
        ctx.log(
          `checked: ${ctx.echo.proxyUrl}/charge received the ${PROXY_TOKENS} card numbers (${echoed.bytes} bytes; ` +
            `${Buffer.byteLength(proxiedBody)} bytes sent to /proxy)`,
        );
        return { headers, proxiedBody, directBody, ids, tenantId };
      })(),
    );
  }
  return ctx.cache.get('proxy');
}

function directEchoRequest(ctx, data) {
  return {
    method: 'POST',
    path: '/charge',
    headers: { 'content-type': 'application/json' },
    body: data.directBody,
  };
}

function proxyRequest(ctx, data) {
  return { method: 'POST', path: '/proxy/charge', headers: data.headers, body: data.proxiedBody };
}

module.exports = { proxySetup, directEchoRequest, proxyRequest, PROXY_CONNECTIONS, DIRECT_N };
