import { CompactEncrypt, importJWK } from 'jose';

/**
 * What a browser does with a client encryption key, as the hosted vault's encryption helper does it: the
 * PEM's body is the raw X25519 key, imported as an OKP JWK, and the token's data is encrypted to it as a
 * compact JWE (ECDH-ES, A256GCM) whose `kid` names the key. `header` adds or replaces header members.
 */
export async function encryptTo(
  publicKeyPem: string,
  keyId: string,
  data: unknown,
  header: Record<string, unknown> = {},
): Promise<string> {
  const raw = Buffer.from(publicKeyPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const key = await importJWK({ kty: 'OKP', crv: 'X25519', x: raw.toString('base64url') }, 'ECDH-ES');
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(data)))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', kid: keyId, ...header })
    .encrypt(key);
}

/** A compact JWE whose protected header is replaced by `header` (the rest kept: it no longer decrypts). */
export function withHeader(jwe: string, header: Record<string, unknown>): string {
  const [, ...rest] = jwe.split('.');
  return [Buffer.from(JSON.stringify(header)).toString('base64url'), ...rest].join('.');
}

/** The protected header of a compact JWE. */
export function headerOf(jwe: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwe.split('.')[0], 'base64url').toString('utf8')) as Record<string, unknown>;
}
