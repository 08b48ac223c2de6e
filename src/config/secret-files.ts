import { readFileSync, statSync } from 'node:fs';

/**
 * The settings that carry a secret. Each may be given as `<NAME>_FILE` instead, the path of a file that
 * holds the value (a Kubernetes or Docker secret mounted as a file), so the secret stays out of the
 * process environment that `ps e`, crash reports and child processes see.
 * VAULT_PKCS11_PIN_FILE and VAULT_UNSEAL_SHARE_FILES are files already.
 */
export const SECRET_SETTINGS = [
  'VAULT_MASTER_KEYS',
  'VAULT_BOOTSTRAP_API_KEY',
  'DATABASE_URL',
  'DATABASE_LISTEN_URL',
  'REDIS_URL',
  'SMTP_URL',
  'METRICS_TOKEN',
] as const;

/** A secret file larger than this is not a secret value (a wrong path, a device): refused unread. */
const MAX_BYTES = 64 * 1024;

type Env = Record<string, string | undefined>;

export class SecretFileError extends Error {}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/** The value held in `file`, less one trailing newline (what `echo` and most editors add). */
function readSecret(name: string, file: string): string {
  let value: string;
  try {
    const stats = statSync(file);
    if (!stats.isFile() || stats.size > MAX_BYTES) {
      throw new SecretFileError(
        `${name}_FILE: ${file} is not a regular file of at most ${MAX_BYTES / 1024} KiB`,
      );
    }
    value = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof SecretFileError) {
      throw err;
    }
    throw new SecretFileError(
      `${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  value = value.replace(/\r?\n$/, '');
  if (value.trim() === '') {
    throw new SecretFileError(`${name}_FILE: ${file} is empty`);
  }
  return value;
}

/**
 * The environment with every `<NAME>_FILE` of a secret setting replaced by `<NAME>` read from the file.
 * Both set is refused: which one wins would be a guess. Errors name the setting and the file, never a value.
 */
export function resolveSecretFiles(env: Env): Env {
  const resolved: Env = { ...env };
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    if (!isSet(file)) {
      continue;
    }
    if (isSet(env[name])) {
      throw new SecretFileError(`${name} and ${name}_FILE are both set: keep one`);
    }
    resolved[name] = readSecret(name, file.trim());
    delete resolved[`${name}_FILE`];
  }
  return resolved;
}
