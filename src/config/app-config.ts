import { isAbsolute, resolve } from 'node:path';

export type NodeEnv = 'development' | 'production' | 'test';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Every setting of the service, parsed once at boot. Nothing else reads process.env. */
export interface AppConfig {
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  migrationsRun: boolean;
  databasePoolSize: number;
  masterKeys: string | null;
  bootstrapApiKey: string | null;
  publicUrl: string;
  smtpUrl: string | null;
  mailFrom: string;
  purgeCron: string;
  /** Scheduled jobs (purge, maintenance) run in this process; tests turn them off and call the services. */
  jobsEnabled: boolean;
  tokenizeMaxTokens: number;
  sandboxWorkers: number;
  sandboxTimeoutMs: number;
  sandboxMemoryMb: number;
  proxyTimeoutMs: number;
  proxyAllowLoopback: boolean;
  proxyCaFile: string | null;
  logLevel: LogLevel;
  /** /metrics without a key (otherwise a management key, or METRICS_PORT). */
  metricsPublic: boolean;
  /** Serve /metrics only on this port, without a key; null: on the main port. */
  metricsPort: number | null;
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

const CRON_FIELD = /^[\d*/,-]+$/;

/** Parses and validates the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): AppConfig {
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
    dataDir: isAbsolute(dataDirRaw) ? dataDirRaw : resolve(process.cwd(), dataDirRaw),
    migrationsRun: bool(env, 'MIGRATIONS_RUN', true),
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    masterKeys: present(env, 'VAULT_MASTER_KEYS') ?? null,
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
    sandboxWorkers: int(env, 'SANDBOX_WORKERS', 2, 1, 64),
    sandboxTimeoutMs: int(env, 'SANDBOX_TIMEOUT_MS', 10000, 10, 600000),
    sandboxMemoryMb: int(env, 'SANDBOX_MEMORY_MB', 128, 8, 4096),
    proxyTimeoutMs: int(env, 'PROXY_TIMEOUT_MS', 25000, 100, 600000),
    proxyAllowLoopback: bool(env, 'PROXY_ALLOW_LOOPBACK', false),
    proxyCaFile: present(env, 'PROXY_CA_FILE') ?? null,
    metricsPublic: bool(env, 'METRICS_PUBLIC', false),
    metricsPort: present(env, 'METRICS_PORT') === undefined ? null : int(env, 'METRICS_PORT', 0, 0, 65535),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
  };
  if (config.bootstrapApiKey !== null && !/^key_[1-9A-HJ-NP-Za-km-z]{32,}$/.test(config.bootstrapApiKey)) {
    throw new ConfigError('VAULT_BOOTSTRAP_API_KEY must look like key_<at least 32 base58 characters>');
  }
  if (nodeEnv === 'production') {
    if (config.masterKeys === null) {
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
