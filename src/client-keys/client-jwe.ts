import type { KeyObject } from 'node:crypto';
import { compactDecrypt, decodeProtectedHeader } from 'jose';

/** The one key agreement and content encryption a client JWE may use: what the hosted vault's keys are for. */
export const JWE_ALG = 'ECDH-ES';
export const JWE_ENC = 'A256GCM';

/**
 * The protected header members a client JWE may carry. Anything else is refused: `zip` (decompression of
 * attacker-chosen data), `jku`/`jwk`/`x5u`/`x5c` (the sender naming its own key), `crit` and the rest.
 */
const ALLOWED_HEADER = new Set(['alg', 'enc', 'kid', 'epk', 'apu', 'apv', 'typ', 'cty']);
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why a JWE was refused; `message` names the problem, never the content. */
export class ClientJweError extends Error {}

/** What `open` needs of a key: the private key, or why the named key cannot decrypt. */
export type KeyLookup = (kid: string) => Promise<KeyObject | string>;

/**
 * Reads a compact JWE made with one of the tenant's client encryption keys and returns its plaintext as
 * JSON. Only ECDH-ES with A256GCM, a `kid` that is a key id, and the members above are accepted.
 */
export async function openClientJwe(jwe: unknown, lookup: KeyLookup): Promise<unknown> {
  if (typeof jwe !== 'string') {
    throw new ClientJweError('must be a JWE compact serialization string');
  }
  const parts = jwe.split('.');
  if (parts.length !== 5 || !parts.every((p) => BASE64URL.test(p))) {
    throw new ClientJweError('is not a JWE compact serialization');
  }
  const header = readHeader(jwe);
  const unexpected = Object.keys(header).filter((k) => !ALLOWED_HEADER.has(k));
  if (unexpected.length > 0) {
    throw new ClientJweError(
      `has header members a client JWE may not carry: ${unexpected.sort().join(', ')}`,
    );
  }
  if (header.alg !== JWE_ALG || header.enc !== JWE_ENC) {
    throw new ClientJweError(`must use alg ${JWE_ALG} and enc ${JWE_ENC}`);
  }
  if (typeof header.kid !== 'string' || !UUID.test(header.kid)) {
    throw new ClientJweError('must name its client encryption key in kid (the key_id)');
  }
  if (parts[1] !== '') {
    throw new ClientJweError(`must have an empty encrypted key (${JWE_ALG} agrees the key directly)`);
  }
  const key = await lookup(header.kid.toLowerCase());
  if (typeof key === 'string') {
    throw new ClientJweError(key);
  }
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(jwe, key, {
      keyManagementAlgorithms: [JWE_ALG],
      contentEncryptionAlgorithms: [JWE_ENC],
    }));
  } catch {
    throw new ClientJweError('could not be decrypted with the key its kid names');
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext)) as unknown;
  } catch {
    throw new ClientJweError('does not hold UTF-8 JSON');
  }
}

function readHeader(jwe: string): Record<string, unknown> {
  try {
    return decodeProtectedHeader(jwe);
  } catch {
    throw new ClientJweError('has no readable protected header');
  }
}
