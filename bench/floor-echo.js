'use strict';
/**
 * The proxy floors' outbound half (bench/floor-server.js, bench/nest-floor.js): the request's body read whole,
 * then POSTed over a keep-alive HTTPS connection to the echo server, whose answer comes back whole.
 * FLOOR_ECHO_URL (https://127.0.0.1:<port>), FLOOR_ECHO_HOST (the certificate's name) and FLOOR_ECHO_CA (the
 * CA file) name the echo server; echoEnv(echo) sets them for a floor's child process.
 */
const { readFileSync } = require('node:fs');

/** A stream's bytes, once it ends. */
function readBody(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * In a floor's child process: forward(path, headers, body) -> { status, type, payload } over one keep-alive
 * agent, or null when FLOOR_ECHO_URL is not set.
 */
function echoForwarder() {
  if (!process.env.FLOOR_ECHO_URL) {
    return null;
  }
  const https = require('node:https');
  const url = new URL(process.env.FLOOR_ECHO_URL);
  const servername = process.env.FLOOR_ECHO_HOST;
  const agent = new https.Agent({ keepAlive: true, ca: readFileSync(process.env.FLOOR_ECHO_CA) });
  return (path, headers, body) =>
    new Promise((resolve, reject) => {
      const outbound = https.request(
        {
          host: url.hostname,
          port: url.port,
          servername,
          path,
          method: 'POST',
          agent,
          headers: {
            host: `${servername}:${url.port}`,
            'content-type': headers['content-type'] ?? 'application/octet-stream',
            'content-length': body.length,
          },
        },
        (res) => {
          readBody(res).then(
            (payload) => resolve({ status: res.statusCode, type: res.headers['content-type'], payload }),
            reject,
          );
        },
      );
      outbound.on('error', reject);
      outbound.end(body);
    });
}

/** The child process's environment for `echo` ({ url, host, caFile } of the echo server, or null). */
function echoEnv(echo) {
  return echo === null
    ? {}
    : { FLOOR_ECHO_URL: echo.url, FLOOR_ECHO_HOST: echo.host, FLOOR_ECHO_CA: echo.caFile };
}

module.exports = { echoEnv, echoForwarder, readBody };
