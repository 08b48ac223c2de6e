'use strict';
/**
 * Background load from clients that behave as the official SDKs do: each connection sends its request again
 * as soon as it is answered, except that a 429 or 503 makes it wait the answer's Retry-After first. It keeps
 * a tenant's share of the sandbox full (its runs and its queue) without the refused excess turning into a
 * tight loop of refusals, which no SDK sends and which the rate limits exist to stop.
 *
 * Returns what stopBackground expects of an autocannon instance: stop(), and a promise of the totals.
 */
const http = require('node:http');

const MAX_WAIT_MS = 5000;

function politeLoad({ url, method, headers, body, connections }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const statusCodes = {};
  let requests = 0;
  let stopped = false;
  const timers = new Set();

  const send = () =>
    new Promise((resolve) => {
      const req = http.request(url, { method, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }));
      });
      req.on('error', () => resolve({ status: 'error', retryAfter: undefined }));
      req.end(body);
    });

  const pause = (ms) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
      timer.stopNow = resolve;
    });

  const client = async () => {
    while (!stopped) {
      const { status, retryAfter } = await send();
      requests += 1;
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if ((status === 429 || status === 503) && !stopped) {
        const seconds = Number(retryAfter);
        await pause(Math.min(MAX_WAIT_MS, Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000));
      }
    }
  };

  const done = Promise.all(Array.from({ length: connections }, client)).then(() => {
    agent.destroy();
    return { connections, requests: { total: requests }, statusCodeStats: countsOf(statusCodes) };
  });

  return {
    stop() {
      stopped = true;
      for (const timer of timers) {
        clearTimeout(timer);
        timer.stopNow();
      }
    },
    then: (onFulfilled, onRejected) => done.then(onFulfilled, onRejected),
  };
}

function countsOf(statusCodes) {
  return Object.fromEntries(Object.entries(statusCodes).map(([code, count]) => [code, { count }]));
}

module.exports = { politeLoad };
