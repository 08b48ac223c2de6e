import { generateKeyPairSync, KeyObject, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import forge from 'node-forge';

/**
 * Certificates made at test time for HTTPS servers on 127.0.0.1: a CA whose file is PROXY_CA_FILE, leaf
 * certificates it signs, and self-signed ones it does not. Keys and signatures come from Node's crypto
 * (node-forge's own RSA is slow); node-forge, a dev dependency, only writes the X.509 structures.
 */
export interface TestCertificate {
  /** PKCS#8 PEM private key. */
  key: string;
  /** PEM certificate. */
  cert: string;
}

export interface CertificateOptions {
  notBefore?: Date;
  notAfter?: Date;
}

export interface TestCa {
  certPem: string;
  /** A file holding certPem, for PROXY_CA_FILE. */
  file: string;
  /** A server certificate for these DNS names (and 127.0.0.1), signed by this CA. */
  issue(dnsNames: string[], options?: CertificateOptions): TestCertificate;
  /** Removes the temporary folder holding `file`. */
  dispose(): void;
}

interface KeyPair {
  privateKey: KeyObject;
  forgePublic: forge.pki.rsa.PublicKey;
  pem: string;
}

function newKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privateKey,
    forgePublic: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

// Not in node-forge's type definitions; cert.sign() uses it the same way.
const getTbsCertificate = (
  forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
).getTBSCertificate;

/** What forge's cert.sign(key, sha256) does, with the RSA signature made by Node. */
function signCertificate(cert: forge.pki.Certificate, issuerKey: KeyObject): string {
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption;
  cert.tbsCertificate = getTbsCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, issuerKey).toString('binary');
  return forge.pki.certificateToPem(cert);
}

// Key generation is the slow part: one key pair serves every leaf certificate of a test process.
let leafKeys: KeyPair | undefined;
function sharedLeafKeys(): KeyPair {
  leafKeys ??= newKeyPair();
  return leafKeys;
}

function serialNumber(): string {
  // A minimal positive DER INTEGER: top bit clear and no leading zero byte. (A leading 0 hex digit made an odd
  // length that node-forge pads with a zero byte, which OpenSSL now and then refused as illegal padding.)
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] & 0x7f) | 0x40;
  return bytes.toString('hex');
}

const HOUR_MS = 3600_000;

function baseCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  commonName: string,
  options: CertificateOptions,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serialNumber();
  cert.validity.notBefore = options.notBefore ?? new Date(Date.now() - HOUR_MS);
  cert.validity.notAfter = options.notAfter ?? new Date(Date.now() + 24 * HOUR_MS);
  cert.setSubject([
    { name: 'commonName', value: commonName },
    { name: 'organizationName', value: 'Token Vault tests' },
  ]);
  return cert;
}

function serverExtensions(dnsNames: string[]): object[] {
  return [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: [...dnsNames.map((value) => ({ type: 2, value })), { type: 7, ip: '127.0.0.1' }],
    },
  ];
}

/** A fresh CA (its own key), written to a temporary file. Call dispose() when done. */
export function createTestCa(commonName = 'Token Vault test CA'): TestCa {
  const caKeys = newKeyPair();
  const caCert = baseCertificate(caKeys.forgePublic, commonName, {});
  caCert.setIssuer(caCert.subject.attributes);
  caCert.setExtensions([
    { name: 'basicConstraints', critical: true, cA: true },
    { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const certPem = signCertificate(caCert, caKeys.privateKey);
  const folder = mkdtempSync(join(tmpdir(), 'tv-test-ca-'));
  const file = join(folder, 'ca.pem');
  writeFileSync(file, certPem);
  return {
    certPem,
    file,
    issue(dnsNames, options = {}) {
      const keys = sharedLeafKeys();
      const cert = baseCertificate(keys.forgePublic, dnsNames[0] ?? 'test', options);
      cert.setIssuer(caCert.subject.attributes);
      cert.setExtensions([
        ...serverExtensions(dnsNames),
        { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
      ]);
      return { key: keys.pem, cert: signCertificate(cert, caKeys.privateKey) };
    },
    dispose() {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** A server certificate signed by its own key: trusted by nobody. */
export function selfSignedCertificate(dnsNames: string[], options: CertificateOptions = {}): TestCertificate {
  const keys = sharedLeafKeys();
  const cert = baseCertificate(keys.forgePublic, dnsNames[0] ?? 'test', options);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions(serverExtensions(dnsNames));
  return { key: keys.pem, cert: signCertificate(cert, keys.privateKey) };
}
