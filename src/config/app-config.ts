import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import { parseMasterKeys } from '../crypto/master-keys';
import { BuildInfo, buildInfo } from './build-info';
import { CorsOrigins, loadCorsOrigins } from './cors-config';
import { DatabaseTlsConfig, loadDatabaseTlsConfig } from './database-tls-config';
import { KeyCustodyConfig, loadKeyCustodyConfig } from './key-custody-config';
import { loadRateLimitConfig, RateLimitConfig } from './rate-limit-config';
import { resolveSecretFiles } from './secret-files';

export type NodeEnv = 'development' | 'production' | 'test';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Every setting of the service, parsed once at boot. Nothing else reads process.env. */
export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  databaseUrl: string | null;
  /** Where the change listeners LISTEN: a direct connection when DATABASE_URL goes through a pooler. */
  databaseListenUrl: string | null;
  dataDir: string;
  migrationsRun: boolean;
  databasePoolSize: number;
  /** Time to get a PostgreSQL connection (from the pool, or a new one) before a request answers 503. */
  databaseConnectTimeoutMs: number;
  /** The hot token statements as named prepared statements; off behind a pooler in transaction mode. */
  databasePreparedStatements: boolean;
  /** PostgreSQL's statement_timeout for the pool's connections (0: none). */
  databaseStatementTimeoutMs: number;
  /** TLS to PostgreSQL, for every connection (database-tls-config.ts). */
  databaseTls: DatabaseTlsConfig;
  masterKeys: string | null;
  /** Master key provider, PKCS#11 settings, cryptoperiods, sealed start (key-custody-config.ts). */
  keyCustody: KeyCustodyConfig;
  bootstrapApiKey: string | null;
  publicUrl: string;
  smtpUrl: string | null;
  mailFrom: string;
  purgeCron: string;
  /** Scheduled jobs (purge, maintenance) run in this process; tests turn them off and call the services. */
  jobsEnabled: boolean;
  tokenizeMaxTokens: number;
  /** Deduplicating token writes per application and minute (0: unlimited). */
  dedupWritesPerMinute: number;
  sandboxWorkers: number;
  sandboxTimeoutMs: number;
  sandboxMemoryMb: number;
  /** Runs waiting for a sandbox worker, all tenants together (503 beyond). */
  sandboxQueueMax: number;
  /** Runs of one tenant waiting for a worker (429 beyond). */
  sandboxTenantQueueMax: number;
  /** Workers one tenant may hold while another tenant's run waits. */
  sandboxTenantRunningMax: number;
  /** Webhook deliveries one replica attempts at once. */
  webhookConcurrency: number;
  /** One tenant's webhook deliveries in flight at once, over every replica. */
  webhookTenantConcurrency: number;
  /** The largest document (file) an upload may carry, in bytes (413 beyond, refused while it streams). */
  documentMaxBytes: number;
  proxyTimeoutMs: number;
  proxyAllowLoopback: boolean;
  proxyCaFile: string | null;
  logLevel: LogLevel;
  /** The HTTP server's socket limits (src/common/server-limits.ts). */
  server: ServerLimitsConfig;
  /** Serve /metrics only on this port, on metricsHost; null: on the main port, and only with metricsToken. */
  metricsPort: number | null;
  metricsHost: string;
  /** The operator's bearer token for /metrics; never a tenant's key. */
  metricsToken: string | null;
  /** Addresses and CIDR ranges of reverse proxies whose X-Forwarded-For is believed; empty: none. */
  trustedProxies: string[];
  /** Origins whose pages may call the API with fetch (CORS); '*': any. */
  corsOrigins: CorsOrigins;
  /** Invitation e-mails per address and tenant in any hour (create and resend). */
  invitationMailsPerAddressPerHour: number;
  /** Invitation e-mails per tenant in any hour. */
  invitationMailsPerTenantPerHour: number;
  /** Days a deleted tenant is kept (keys refused, data intact) before the purge job removes it. */
  tenantDeletionGraceDays: number;
  /** The shared rate limits and their store (rate-limit-config.ts). */
  rateLimits: RateLimitConfig;
  audit: AuditConfig;
  /** The version, VAULT_BUILD_COMMIT and Node.js, for token_vault_build_info and GET /health. */
  build: BuildInfo;
}

export interface AuditConfig {
  /** AUDIT_ENABLED=false writes no audit records: only for a benchmark's baseline, never in service. */
  enabled: boolean;
  /** Records older than this many days are deleted by the retention job (AUDIT_RETENTION_DAYS). */
  retentionDays: number;
  /** How often new records are chained (AUDIT_SEAL_INTERVAL_MS). */
  sealIntervalMs: number;
}

export interface ServerLimitsConfig {
  /** Open connections in all; past it new ones are closed at once (Node's maxConnections). */
  maxConnections: number;
  /** Open connections from one client address (IPv6: one /64); past it new ones are closed at once. */
  maxConnectionsPerAddress: number;
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body (not the time to answer it). */
  requestTimeoutMs: number;
  /** How long a kept-alive connection waits for the next request. */
  keepAliveTimeoutMs: number;
  /** A connection with no traffic either way this long is closed, unless the vault is still answering. */
  idleTimeoutMs: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function present(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = present(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}`);
  }
  return Number(raw);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = present(env, name)?.toLowerCase();
  if (raw === undefined) {
    return fallback;
  }
  if (['true', '1', 'yes'].includes(raw)) {
    return true;
  }
  if (['false', '0', 'no'].includes(raw)) {
    return false;
  }
  throw new ConfigError(`${name} must be true or false`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = present(env, name);
  if (raw === undefined) {
    return fallback;
  }
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = present(env, name);
  if (raw === undefined) {
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')})`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')})`);
  }
  return raw;
}

/** A comma-separated list of IP addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`). */
function addressList(env: Env, name: string): string[] {
  const raw = present(env, name);
  if (raw === undefined) {
    return [];
  }
  return raw.split(',').map((entry) => {
    const [address, prefix, extra] = entry.trim().split('/');
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= max);
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(`${name} must be a comma-separated list of IP addresses or CIDR ranges`);
    }
    return entry.trim();
  });
}

const CRON_FIELD = /^[\d*/,-]+$/;

/** The sandbox's queue limits; their defaults follow SANDBOX_WORKERS. */
function sandboxQueueing(
  env: Env,
): Pick<AppConfig, 'sandboxQueueMax' | 'sandboxTenantQueueMax' | 'sandboxTenantRunningMax'> {
  const workers = int(env, 'SANDBOX_WORKERS', 2, 1, 64);
  const queueMax = int(env, 'SANDBOX_QUEUE_MAX', workers * 64, 1, 100_000);
  const tenantQueueMax = int(env, 'SANDBOX_TENANT_QUEUE', Math.min(workers * 16, queueMax), 1, queueMax);
  const runningMax = int(env, 'SANDBOX_TENANT_RUNNING', Math.max(1, workers - 1), 1, workers);
  return {
    sandboxQueueMax: queueMax,
    sandboxTenantQueueMax: tenantQueueMax,
    sandboxTenantRunningMax: runningMax,
  };
}

function keyCustody(env: Env): KeyCustodyConfig {
  try {
    return loadKeyCustodyConfig(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function databaseTls(env: Env): DatabaseTlsConfig {
  const urls = ['DATABASE_URL', 'DATABASE_LISTEN_URL'].map((name) => ({
    name,
    url: url(env, name, ['postgres:', 'postgresql:']) ?? null,
  }));
  try {
    return loadDatabaseTlsConfig(env, urls);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function rateLimits(env: Env): RateLimitConfig {
  try {
    return loadRateLimitConfig(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function corsOrigins(env: Env): CorsOrigins {
  try {
    return loadCorsOrigins(env.CORS_ORIGINS);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

function build(env: Env): BuildInfo {
  try {
    return buildInfo(present(env, 'VAULT_BUILD_COMMIT'));
  } catch (err) {
    throw new ConfigError(`VAULT_BUILD_COMMIT ${(err as Error).message}`);
  }
}

function withSecretFiles(env: Env): Env {
  try {
    return resolveSecretFiles(env);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/**
 * Parses and validates the environment; throws ConfigError naming the first bad variable. Secret settings
 * may come from files (`<NAME>_FILE`, secret-files.ts).
 */
export function loadConfig(rawEnv: Env = process.env): AppConfig {
  const env = withSecretFiles(rawEnv);
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'], 'development');
  const port = int(env, 'PORT', 3000, 0, 65535);
  const dataDirRaw = present(env, 'DATA_DIR') ?? './data';
  const purgeCron = present(env, 'PURGE_CRON') ?? '0 * * * * *';
  const cronFields = purgeCron.split(/\s+/);
  if (cronFields.length < 5 || cronFields.length > 6 || !cronFields.every((f) => CRON_FIELD.test(f))) {
    throw new ConfigError('PURGE_CRON must be a cron expression of 5 or 6 fields');
  }
  const config: AppConfig = {
    nodeEnv,
    port,
    host: present(env, 'HOST') ?? '0.0.0.0',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']) ?? null,
    databaseListenUrl:
      url(env, 'DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']) ??
      url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']) ??
      null,
    dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(process.cwd(), dataDirRaw),
    migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    databaseConnectTimeoutMs: int(env, 'DATABASE_CONNECT_TIMEOUT_MS', 2000, 100, 60000),
    databasePreparedStatements: bool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databaseStatementTimeoutMs: int(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30000, 0, 3_600_000),
    databaseTls: databaseTls(env),
    masterKeys: present(env, 'VAULT_MASTER_KEYS') ?? null,
    keyCustody: keyCustody(env),
    bootstrapApiKey: present(env, 'VAULT_BOOTSTRAP_API_KEY') ?? null,
    publicUrl: (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `http://localhost:${port}`).replace(
      /\/+$/,
      '',
    ),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']) ?? null,
    mailFrom: present(env, 'MAIL_FROM') ?? 'Token Vault <no-reply@token-vault.local>',
    purgeCron,
    jobsEnabled: bool(env, 'JOBS_ENABLED', true),
    tokenizeMaxTokens: int(env, 'TOKENIZE_MAX_TOKENS', 100, 1, 10000),
    dedupWritesPerMinute: int(env, 'DEDUP_WRITES_PER_MINUTE', 1200, 0, 1_000_000),
    sandboxWorkers: int(env, 'SANDBOX_WORKERS', 2, 1, 64),
    sandboxTimeoutMs: int(env, 'SANDBOX_TIMEOUT_MS', 10000, 10, 600000),
    sandboxMemoryMb: int(env, 'SANDBOX_MEMORY_MB', 128, 8, 4096),
    ...sandboxQueueing(env),
    webhookConcurrency: int(env, 'WEBHOOK_CONCURRENCY', 20, 1, 1000),
    webhookTenantConcurrency: int(env, 'WEBHOOK_TENANT_CONCURRENCY', 5, 1, 1000),
    documentMaxBytes: int(env, 'DOCUMENT_MAX_BYTES', 25 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    proxyTimeoutMs: int(env, 'PROXY_TIMEOUT_MS', 25000, 100, 600000),
    proxyAllowLoopback: bool(env, 'PROXY_ALLOW_LOOPBACK', false),
    proxyCaFile: present(env, 'PROXY_CA_FILE') ?? null,
    server: {
      maxConnections: int(env, 'HTTP_MAX_CONNECTIONS', 10000, 1, 1_000_000),
      maxConnectionsPerAddress: int(env, 'HTTP_CONNECTIONS_PER_IP', 256, 1, 1_000_000),
      headersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 15000, 100, 600000),
      requestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 60000, 100, 3600000),
      keepAliveTimeoutMs: int(env, 'HTTP_KEEPALIVE_MS', 5000, 100, 600000),
      idleTimeoutMs: int(env, 'HTTP_IDLE_TIMEOUT_MS', 30000, 100, 3600000),
    },
    metricsPort: present(env, 'METRICS_PORT') === undefined ? null : int(env, 'METRICS_PORT', 0, 0, 65535),
    metricsHost: present(env, 'METRICS_HOST') ?? '127.0.0.1',
    metricsToken: present(env, 'METRICS_TOKEN') ?? null,
    trustedProxies: addressList(env, 'TRUST_PROXY'),
    corsOrigins: corsOrigins(env),
    invitationMailsPerAddressPerHour: int(env, 'INVITATION_MAILS_PER_ADDRESS_PER_HOUR', 5, 1, 1000),
    invitationMailsPerTenantPerHour: int(env, 'INVITATION_MAILS_PER_TENANT_PER_HOUR', 100, 1, 10000),
    tenantDeletionGraceDays: int(env, 'TENANT_DELETION_GRACE_DAYS', 30, 0, 3650),
    rateLimits: rateLimits(env),
    audit: {
      enabled: bool(env, 'AUDIT_ENABLED', true),
      retentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36500),
      sealIntervalMs: int(env, 'AUDIT_SEAL_INTERVAL_MS', 1000, 100, 3_600_000),
    },
    build: build(env),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  };
  if (bool(env, 'METRICS_PUBLIC', false)) {
    throw new ConfigError('METRICS_PUBLIC was removed: use METRICS_PORT (a private port) or METRICS_TOKEN');
  }
  if (config.metricsToken !== null && config.metricsToken.length < 32) {
    throw new ConfigError('METRICS_TOKEN must be at least 32 characters');
  }
  if (config.server.headersTimeoutMs > config.server.requestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be above HTTP_REQUEST_TIMEOUT_MS');
  }
  if (config.bootstrapApiKey !== null && !/^key_[1-9A-HJ-NP-Za-km-z]{32,}$/.test(config.bootstrapApiKey)) {
    throw new ConfigError('VAULT_BOOTSTRAP_API_KEY must look like key_<at least 32 base58 characters>');
  }
  if (config.masterKeys !== null) {
    try {
      parseMasterKeys(config.masterKeys);
    } catch (err) {
      // parseMasterKeys' messages name entries by position and id, never key material.
      throw new ConfigError(`VAULT_MASTER_KEYS: ${(err as Error).message.replace(/^master keys: /, '')}`);
    }
  }
  if (nodeEnv === 'production') {
    if (config.masterKeys === null && config.keyCustody.provider === 'env' && !config.keyCustody.sealed) {
      throw new ConfigError('VAULT_MASTER_KEYS is required when NODE_ENV=production');
    }
    if (config.proxyAllowLoopback || config.proxyCaFile !== null) {
      throw new ConfigError(
        'PROXY_ALLOW_LOOPBACK and PROXY_CA_FILE are test settings, refused when NODE_ENV=production',
      );
    }
  }
  return config;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
