import { DatabaseTlsConfig } from '../config/database-tls-config';

/** What pg's `ssl` option gets: false (plain TCP) or the TLS options Node's tls.connect takes. */
export type PgSsl = false | { rejectUnauthorized: boolean; ca?: string };

/**
 * The `ssl` option of every PostgreSQL connection the vault opens (the pool, the change listener, the
 * CLI, the TypeORM CLI), from DATABASE_SSL_MODE. Always explicit, so pg never falls back to PGSSLMODE.
 * With verify-full, Node checks the chain (against `ca`, else the system's CAs) and that the certificate
 * names the host pg connects to (a DNS name, or an IP address in its subjectAltName).
 */
export function pgSsl(tls: DatabaseTlsConfig): PgSsl {
  switch (tls.mode) {
    case 'disable':
      return false;
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-full':
      return { rejectUnauthorized: true, ...(tls.ca === null ? {} : { ca: tls.ca }) };
  }
}
