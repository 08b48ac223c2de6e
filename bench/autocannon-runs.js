'use strict';
// Runs of autocannon for bench/run.js: a scenario's measured window, and the background load some rows run under.
const autocannon = require('autocannon');
const { politeLoad } = require('./polite-load');

function autocannonOptions(baseUrl, definition) {
  const encode = (request) => {
    if (request.body === undefined || typeof request.body === 'string' || Buffer.isBuffer(request.body)) {
      return request;
    }
    return {
      ...request,
      body: JSON.stringify(request.body),
      headers: { 'content-type': 'application/json', ...request.headers },
    };
  };
  if (Array.isArray(definition.requests)) {
    const { requests, ...shared } = definition;
    return { ...encode(shared), url: baseUrl, requests: requests.map(encode) };
  }
  const { path = '/', ...rest } = encode(definition);
  return { ...rest, url: `${baseUrl}${path}` };
}

/**
 * Runs autocannon. With `precise`, the result also has `preciseLatency` { p50, p99, average } in ms computed from
 * every 2xx response's own time: autocannon's histogram keeps whole milliseconds, too coarse for sub-millisecond
 * rows and for differences of a millisecond or two.
 */
async function measure(options, duration, connections, precise = false) {
  const instance = autocannon({ ...options, duration, connections });
  const times = [];
  if (precise) {
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) {
        times.push(responseTime);
      }
    });
  }
  const result = await instance;
  if (precise && times.length > 0) {
    times.sort((a, b) => a - b);
    // Nearest rank, like autocannon's percentiles.
    const percentile = (p) => times[Math.max(0, Math.ceil((p / 100) * times.length) - 1)];
    result.preciseLatency = {
      p50: percentile(50),
      p99: percentile(99),
      average: times.reduce((sum, t) => sum + t, 0) / times.length,
    };
  }
  return result;
}

/** A scenario's `background` load, running on its own connections until stopBackground; null without one. */
function startBackground(scenario, ctx, data, origin, config) {
  if (scenario.background === undefined) {
    return null;
  }
  const definition =
    typeof scenario.background === 'function' ? scenario.background(ctx, data) : scenario.background;
  if (scenario.backgroundHonoursRetryAfter) {
    const { url, method, headers, body } = autocannonOptions(origin, definition);
    return politeLoad({ url, method, headers, body, connections: scenario.backgroundConnections });
  }
  const instance = autocannon({
    ...autocannonOptions(origin, definition),
    // Longer than warm-up and measurement together: stopped once the measurement is done.
    duration: config.warmup + config.duration + 60,
    connections: scenario.backgroundConnections ?? config.connections,
  });
  return instance;
}

async function stopBackground(instance) {
  instance.stop();
  const result = await instance;
  return {
    connections: result.connections,
    requests: result.requests.total,
    status_codes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]),
    ),
  };
}

module.exports = { autocannonOptions, measure, startBackground, stopBackground };
