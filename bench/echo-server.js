'use strict';
/**
 * The HTTPS destination of the proxy scenarios: a tiny echo server on 127.0.0.1 (port 0), in its own process so
 * that neither autocannon nor the vault shares its event loop. It answers every request 200 with
 * { method, path, bytes, body } as JSON, body being the request body parsed as JSON (or its text). Keep-alive on.
 *
 * Its certificate is for ECHO_HOST and is issued by a CA made when the bench starts (keys and signatures from
 * Node's crypto, the X.509 structures from node-forge, a dev dependency); the CA's PEM is written to a temporary
 * file for the vault's PROXY_CA_FILE and removed by stop().
 *
 * `node bench/echo-server.js` is the child process: it reads its key and certificate from ECHO_TLS_KEY and
 * ECHO_TLS_CERT and writes "listening <port>" on stdout once it accepts connections.
 */
const { generateKeyPairSync, randomBytes, sign } = require('node:crypto');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { startChildProcess } = require('./child-process');

/** The destination's host name; the proxy vault's resolver maps it (and only it) to 127.0.0.1. */
const ECHO_HOST = 'echo.bench.test';
/** Longer than any run: the vault's pool closes its idle sockets first (after 4 s), never the echo server. */
const KEEP_ALIVE_MS = 60_000;

function newKeyPair(forge) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** Signs `cert` with SHA-256 RSA through Node (forge's own RSA is slow) and returns its PEM. */
function signWithNode(forge, cert, issuerKey) {
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption;
  cert.tbsCertificate = forge.pki.getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, issuerKey).toString('binary');
  return forge.pki.certificateToPem(cert);
}

function newCertificate(forge, publicKey, commonName) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // A minimal positive DER INTEGER (top bit clear, no leading zero byte).
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x40;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: 'Token Vault bench' },
  ]);
  return cert;
}

/** A fresh CA and a server certificate it issues for `hostname`: { caPem, key, cert } (PEM strings). */
function issueCertificates(hostname) {
  const forge = require('node-forge');
  const caKeys = newKeyPair(forge);
  const ca = newCertificate(forge, caKeys.forgePublic, 'Token Vault bench CA');
  ca.setIssuer(ca.subject.attributes);
  ca.setExtensions([
    { name: 'basicConstraints', critical: true, cA: true },
    { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const caPem = signWithNode(forge, ca, caKeys.privateKey);

  const leafKeys = newKeyPair(forge);
  const leaf = newCertificate(forge, leafKeys.forgePublic, hostname);
  leaf.setIssuer(ca.subject.attributes);
  leaf.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: hostname }] },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  return { caPem, key: leafKeys.pem, cert: signWithNode(forge, leaf, caKeys.privateKey) };
}

/** The child process: serves until SIGTERM. */
function serve() {
  const https = require('node:https');
  const server = https.createServer(
    {
      key: process.env.ECHO_TLS_KEY,
      cert: process.env.ECHO_TLS_CERT,
      keepAlive: true,
      keepAliveTimeout: KEEP_ALIVE_MS,
    },
    (req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = raw.toString('utf8');
        let body = text;
        try {
          body = text === '' ? null : JSON.parse(text);
        } catch {
          // not JSON: echoed as text
        }
        const payload = JSON.stringify({ method: req.method, path: req.url, bytes: raw.length, body });
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        });
        res.end(payload);
      });
    },
  );
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

/**
 * Makes the CA and certificate, writes the CA file and starts the echo server process. Resolves to
 * { host, port, url (https://127.0.0.1:<port>), proxyUrl (https://<host>:<port>), caFile, cpuSeconds(),
 * unexpectedExit(), stop(), killNow() }.
 */
async function startEchoServer({ cpuSeconds }) {
  const { caPem, key, cert } = issueCertificates(ECHO_HOST);
  const folder = mkdtempSync(join(tmpdir(), 'tv-bench-ca-'));
  const caFile = join(folder, 'ca.pem');
  writeFileSync(caFile, caPem);
  const child = await startChildProcess({
    name: 'echo server',
    script: __filename,
    env: { ECHO_TLS_KEY: key, ECHO_TLS_CERT: cert },
    cpuSeconds,
    cleanup: () => rmSync(folder, { recursive: true, force: true }),
  });
  return {
    ...child,
    host: ECHO_HOST,
    url: `https://127.0.0.1:${child.port}`,
    proxyUrl: `https://${ECHO_HOST}:${child.port}`,
    caFile,
  };
}

if (require.main === module) {
  serve();
}

module.exports = { ECHO_HOST, startEchoServer };
