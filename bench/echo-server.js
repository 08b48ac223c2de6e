'use strict';
/**
 * The proxy benchmark's destination: an HTTPS echo server on 127.0.0.1 with a certificate for ECHO_HOST,
 * issued by a CA made for the run (written to a temporary file for the vault's PROXY_CA_FILE). Keys come
 * from Node's crypto; node-forge (a dev dependency) only writes the X.509 structures.
 */
const { generateKeyPairSync, randomBytes, sign } = require('node:crypto');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { createServer } = require('node:https');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const forge = require('node-forge');

const ECHO_HOST = 'echo.bench.test';

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
  };
}

function certificate(publicKey, subject, issuer, extensions, issuerKey) {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = `0${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 3600_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setIssuer([{ name: 'commonName', value: issuer }]);
  cert.setExtensions(extensions);
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption;
  cert.tbsCertificate = forge.pki.getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, issuerKey).toString('binary');
  return forge.pki.certificateToPem(cert);
}

/** Starts the echo server; resolves to { port, caFile, url(path), stop() }. */
async function startEchoServer() {
  const ca = keyPair();
  const caPem = certificate(
    ca.forgePublic,
    'Token Vault bench CA',
    'Token Vault bench CA',
    [
      { name: 'basicConstraints', critical: true, cA: true },
      { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true },
    ],
    ca.privateKey,
  );
  const leaf = keyPair();
  const leafPem = certificate(
    leaf.forgePublic,
    ECHO_HOST,
    'Token Vault bench CA',
    [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: ECHO_HOST },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
    ca.privateKey,
  );
  const folder = mkdtempSync(join(tmpdir(), 'tv-bench-ca-'));
  const caFile = join(folder, 'ca.pem');
  writeFileSync(caFile, caPem);
  const server = createServer({ key: leaf.pem, cert: leafPem, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ received: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    port,
    caFile,
    /** The destination as the vault sees it: the bench host name, resolved to 127.0.0.1 by the vault. */
    hostUrl: `https://${ECHO_HOST}:${port}`,
    /** The same server for a direct call. */
    directUrl: `https://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(folder, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}

module.exports = { startEchoServer, ECHO_HOST };
