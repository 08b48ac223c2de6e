import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * TLS to PostgreSQL (DATABASE_SSL_MODE, DATABASE_SSL_CA_FILE), as managed PostgreSQL requires:
 * - `disable`: plain TCP (a database on the same host or a private network).
 * - `require`: encrypted, the server's certificate not checked (protects against listening, not against
 *   a server that impersonates the database).
 * - `verify-full`: encrypted, the certificate must chain to DATABASE_SSL_CA_FILE (the system's CAs when
 *   unset) and name the host of DATABASE_URL.
 */
export type DatabaseSslMode = 'disable' | 'require' | 'verify-full';

export interface DatabaseTlsConfig {
  mode: DatabaseSslMode;
  /** The CA certificates (PEM) the server's certificate must chain to; null: the system's. */
  ca: string | null;
  caFile: string | null;
}

type Env = Record<string, string | undefined>;

export class DatabaseTlsConfigError extends Error {}

const MODES: readonly DatabaseSslMode[] = ['disable', 'require', 'verify-full'];
/** What pg reads from a connection string's query: TLS is set in one place, these settings. */
const URL_TLS_PARAMS = ['ssl', 'sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslnegotiation'];

function setting(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** Every certificate in a PEM file, each parsed, so a wrong file is refused at boot and not at connect. */
function readCaFile(file: string): string {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DatabaseTlsConfigError(
      `DATABASE_SSL_CA_FILE ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  try {
    blocks.forEach((block) => new X509Certificate(block));
  } catch {
    throw new DatabaseTlsConfigError(
      `DATABASE_SSL_CA_FILE ${file} holds a certificate that cannot be parsed`,
    );
  }
  if (blocks.length === 0) {
    throw new DatabaseTlsConfigError(`DATABASE_SSL_CA_FILE ${file} holds no PEM certificate`);
  }
  return blocks.join('\n');
}

/** Parses DATABASE_SSL_MODE and DATABASE_SSL_CA_FILE; `urls` are the PostgreSQL URLs they apply to. */
export function loadDatabaseTlsConfig(
  env: Env,
  urls: { name: string; url: string | null }[],
): DatabaseTlsConfig {
  const raw = setting(env, 'DATABASE_SSL_MODE');
  if (raw !== undefined && !(MODES as readonly string[]).includes(raw)) {
    throw new DatabaseTlsConfigError(`DATABASE_SSL_MODE must be one of ${MODES.join(', ')}`);
  }
  const mode = (raw ?? 'disable') as DatabaseSslMode;
  const caFile = setting(env, 'DATABASE_SSL_CA_FILE') ?? null;
  if (caFile !== null && mode !== 'verify-full') {
    throw new DatabaseTlsConfigError(
      'DATABASE_SSL_CA_FILE is used with DATABASE_SSL_MODE=verify-full only (require checks no certificate)',
    );
  }
  if (mode !== 'disable' && urls.every(({ url }) => url === null)) {
    throw new DatabaseTlsConfigError(
      'DATABASE_SSL_MODE applies to PostgreSQL (DATABASE_URL); the embedded database has no network connection',
    );
  }
  for (const { name, url } of urls) {
    const param = url === null ? undefined : URL_TLS_PARAMS.find((p) => new URL(url).searchParams.has(p));
    if (param !== undefined) {
      // pg reads sslmode unlike libpq (its `require` verifies the certificate): one place says what happens.
      throw new DatabaseTlsConfigError(
        `${name} carries ?${param}=: remove it and set DATABASE_SSL_MODE (disable, require, verify-full) and, for a private CA, DATABASE_SSL_CA_FILE`,
      );
    }
  }
  return { mode, caFile, ca: caFile === null ? null : readCaFile(caFile) };
}
