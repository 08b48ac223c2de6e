import { Client } from 'pg';
import { ConfigError } from '../config/app-config';
import { DatabaseTlsConfig } from '../config/database-tls-config';
import { pgSsl } from './tls';

/** A PostgreSQL setting that cannot work: main.ts and the CLI print its one line and exit 1. */
export class DatabaseSetupError extends ConfigError {}

/** Node's codes for a certificate that does not chain to a trusted CA. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
]);

interface Target {
  host: string;
  port: string;
  user: string;
  database: string;
}

function target(url: string): Target {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port || '5432',
    user,
    database: decodeURIComponent(parsed.pathname.slice(1)) || user,
  };
}

/** The one line for a failure retrying cannot mend; null for one it may (down, starting, unreachable). */
export function setupProblem(err: unknown, url: string, tls: DatabaseTlsConfig): string | null {
  const { code, message } = err as { code?: string; message?: string };
  const t = target(url);
  const at = `PostgreSQL at ${t.host}:${t.port}`;
  const verify = `DATABASE_SSL_MODE=verify-full: the certificate of ${at}`;
  if (code === '3D000') {
    const user = t.user === '' ? '' : ` -U ${t.user}`;
    return `The database "${t.database}" named by DATABASE_URL does not exist on ${at}: create it (createdb -h ${t.host} -p ${t.port}${user} ${t.database}, or CREATE DATABASE "${t.database}";) and start again.`;
  }
  if (code === '28P01') {
    return `${at} refused the password of user "${t.user}" given in DATABASE_URL.`;
  }
  if (code === '28000' && tls.mode === 'disable' && /no encryption/.test(message ?? '')) {
    return `${at} accepts only encrypted connections (pg_hba.conf: hostssl): set DATABASE_SSL_MODE=verify-full (with DATABASE_SSL_CA_FILE for a private CA) or require.`;
  }
  if (code === '28000') {
    return `${at} refused the connection: ${message ?? code}.`;
  }
  if (message === 'The server does not support SSL connections') {
    return `${at} does not accept TLS (ssl = off on the server): DATABASE_SSL_MODE=${tls.mode} needs ssl = on there, or DATABASE_SSL_MODE=disable.`;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `${verify} is not for the host name "${t.host}" of DATABASE_URL: connect with a name the certificate lists (${(err as { cert?: { subjectaltname?: string } }).cert?.subjectaltname ?? 'none'}).`;
  }
  if (code !== undefined && UNTRUSTED.has(code)) {
    const cas = tls.caFile ?? "the system's trusted CAs (set DATABASE_SSL_CA_FILE to your provider's CA)";
    return `${verify} is not signed by a CA in ${cas} (${code}).`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return `${verify} is ${code === 'CERT_HAS_EXPIRED' ? 'expired' : 'not valid yet'}.`;
  }
  return null;
}

/**
 * One connection before anything else opens the database: a database that does not exist, a refused
 * password or a certificate that cannot be trusted fails the boot at once in one line, instead of the
 * pool's retries with a stack trace each. A database that is down or starting is left to those retries.
 */
export async function preflight(url: string, tls: DatabaseTlsConfig, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url, ssl: pgSsl(tls), connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    const problem = setupProblem(err, url, tls);
    if (problem !== null) {
      throw new DatabaseSetupError(problem);
    }
    return;
  } finally {
    await client.end().catch(() => undefined);
  }
}
