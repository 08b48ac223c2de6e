'use strict';
/**
 * Preloaded into a vault by bench/round-trips.js (NODE_OPTIONS=--require): appends one line per statement the
 * process sends to BENCH_ROUND_TRIP_LOG, `<Q|P> <request> <statement name or first words>`. Q starts a round
 * trip; P was sent on a pipelined connection while an earlier statement was still unanswered there, so it
 * rides the same round trip. <request> numbers the HTTP request it was made for ('-': background work).
 */
const { AsyncLocalStorage } = require('node:async_hooks');
const { appendFileSync } = require('node:fs');
const http = require('node:http');
const pg = require(require.resolve('pg', { paths: [process.cwd()] }));

const LOG = process.env.BENCH_ROUND_TRIP_LOG;
const request = new AsyncLocalStorage();
let requests = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  return event === 'request'
    ? request.run(++requests, () => emit.call(this, event, ...args))
    : emit.call(this, event, ...args);
};

const unanswered = new WeakMap();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const waiting = unanswered.get(this) ?? 0;
  const text = typeof config === 'string' ? config : (config?.name ?? config?.text ?? '');
  const line = `${this.pipeline && waiting > 0 ? 'P' : 'Q'} ${request.getStore() ?? '-'} ${text.replace(/\s+/g, ' ').trim().slice(0, 60)}`;
  appendFileSync(LOG, `${line}\n`);
  unanswered.set(this, waiting + 1);
  const answered = () => unanswered.set(this, unanswered.get(this) - 1);
  // pg-pool's own `query` passes a callback, and pg then answers no promise.
  const callback = rest.findIndex((arg) => typeof arg === 'function');
  if (callback >= 0) {
    const done = rest[callback];
    rest[callback] = (...results) => {
      answered();
      done(...results);
    };
  }
  const result = query.call(this, config, ...rest);
  if (callback < 0 && typeof result?.then === 'function') {
    result.then(answered, answered);
  } else if (callback < 0) {
    // A query object (a cursor, a stream): its end is not tracked.
    answered();
  }
  return result;
};
