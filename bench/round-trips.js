'use strict';
/**
 * Counts the statements and database round trips of one request, as the vault sends them (not estimated):
 * `node bench/round-trips.js` starts the built vault with bench/round-trip-hook.js preloaded, on the embedded
 * database or on a new one of BENCH_DATABASE_URL's server, and sends BENCH_ROUND_TRIP_REQUESTS (40) requests
 * one at a time of each kind: POST /tokens (card) without and with a new BT-IDEMPOTENCY-KEY, and a replay of
 * a keyed one. Prints per request: round trips, statements (pipelined ones ride an earlier round trip), and
 * apart from them the rate limiter's statements (its allowance is leased in blocks: some requests pay one).
 */
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { cardBody } = require('./card-body');
const { startServer } = require('./server');

const REQUESTS = Number(process.env.BENCH_ROUND_TRIP_REQUESTS ?? 40);

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'tv-round-trips-'));
  const log = join(folder, 'statements.log');
  writeFileSync(log, '');
  const server = await startServer({
    postgresUrl: process.env.BENCH_DATABASE_URL || null,
    env: { BENCH_ROUND_TRIP_LOG: log, NODE_OPTIONS: `--require ${join(__dirname, 'round-trip-hook.js')}` },
  });
  try {
    const app = await call(server, server.key, '/applications', {
      name: 'round trips',
      type: 'private',
      permissions: ['token:create'],
    });
    const key = JSON.parse(app.text).key;
    const create = (idempotencyKey, body = cardBody()) => call(server, key, '/tokens', body, idempotencyKey);
    const kept = { key: `kept-${Date.now()}`, body: cardBody() };
    await create(kept.key, kept.body);
    for (let i = 0; i < 5; i += 1) {
      await create();
      await create(`warm-${Date.now()}-${i}`);
    }
    const kinds = [
      ['POST /tokens (card)', () => create()],
      ['POST /tokens (card, keyed)', (i) => create(`new-${Date.now()}-${i}`)],
      ['POST /tokens (card, keyed replay)', () => create(kept.key, kept.body)],
    ];
    console.log(`per request, ${REQUESTS} requests each, one at a time:`);
    for (const [name, send] of kinds) {
      const from = readFileSync(log, 'utf8').length;
      for (let i = 0; i < REQUESTS; i += 1) {
        await send(i);
      }
      // Lines of the requests only: background work (pollers, the audit sealer) is marked '-'.
      const lines = readFileSync(log, 'utf8')
        .slice(from)
        .split('\n')
        .filter((line) => /^[QP] \d+ /.test(line));
      const limiter = lines.filter((line) => line.includes('rate_limits'));
      const own = lines.filter((line) => !line.includes('rate_limits'));
      const per = (n) => (n / REQUESTS).toFixed(2);
      console.log(
        `  ${name.padEnd(34)} round trips ${per(own.filter((l) => l.startsWith('Q')).length)}  ` +
          `statements ${per(own.length)}  rate limiter ${per(limiter.length)}`,
      );
    }
  } finally {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

async function call(server, apiKey, path, body, idempotencyKey) {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'bt-api-key': apiKey,
      'content-type': 'application/json',
      ...(idempotencyKey === undefined ? {} : { 'bt-idempotency-key': idempotencyKey }),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) {
    throw new Error(`POST ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  }
  return { text };
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
