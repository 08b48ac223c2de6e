import { ConfigError, loadConfig } from '../config/app-config';
import { KeyProviderError } from '../crypto/pkcs11-key-provider';
import { MasterKeysMismatchError } from '../crypto/master-keyring.service';
import { DatabaseInUseError } from '../database/embedded-postgres';
import { auditExport } from './audit-export';
import { auditVerify } from './audit-verify';
import { formulaCreateOfficial } from './formula-create-official';
import { keysMigrateProvider } from './keys-migrate-provider';
import { keysReencrypt } from './keys-reencrypt';
import { keysRetireMaster } from './keys-retire-master';
import { keysRotateMaster } from './keys-rotate-master';
import { keysRotateTenant } from './keys-rotate-tenant';
import { keysSplit } from './keys-split';
import { CliError, Command, fail, out, UsageError } from './kit';
import { migrateCommand } from './migrate';
import { openapiCommand } from './openapi';
import { tenantCreate } from './tenant-create';
import { unsealCommand } from './unseal';
import { unsealReset } from './unseal-reset';

/** Every operator command, in the order `help` lists them. One file per command beside this one. */
const COMMANDS: Record<string, Command> = {
  'tenant:create': tenantCreate,
  migrate: migrateCommand,
  'keys:rotate-master': keysRotateMaster,
  'keys:migrate-provider': keysMigrateProvider,
  'keys:retire-master': keysRetireMaster,
  'keys:split': keysSplit,
  unseal: unsealCommand,
  'unseal:reset': unsealReset,
  'keys:rotate-tenant': keysRotateTenant,
  'keys:reencrypt': keysReencrypt,
  'formula:create-official': formulaCreateOfficial,
  'audit:verify': auditVerify,
  'audit:export': auditExport,
  openapi: openapiCommand,
  help: {
    usage: 'help [command]',
    summary: 'Show this help.',
    run: (args) => {
      printHelp(args[0]);
      return Promise.resolve();
    },
  },
};

function findCommand(name: string): Command | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

function printHelp(command?: string, write: (text: string) => void = out): void {
  const known = command !== undefined ? findCommand(command) : undefined;
  if (known !== undefined) {
    write(`Usage: npx token-vault ${known.usage}\n\n${known.summary}`);
    return;
  }
  write(
    [
      'Token Vault operator commands',
      '',
      'Usage: npx token-vault <command> [options]',
      "       (for scripts: only the command writes to stdout; npm run cli -- <command> works too, after npm's",
      '       banner; in the container: node dist/src/cli.js <command>)',
      '',
      ...Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.summary}`),
      '',
      'The database comes from the same environment as the service: DATABASE_URL for PostgreSQL, otherwise',
      'the embedded database under DATA_DIR (default ./data). The embedded database can be opened by one',
      'process at a time: stop the server before running a command on it.',
    ].join('\n'),
  );
}

/** Runs one command line; resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [name = 'help', ...args] = argv;
  if (name === '--help' || name === '-h') {
    printHelp();
    return 0;
  }
  const command = findCommand(name);
  if (command === undefined) {
    fail(`Unknown command: ${name}\n`);
    printHelp(undefined, fail);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    printHelp(name);
    return 0;
  }
  try {
    // The CLI logs warnings and errors only, unless LOG_LEVEL says otherwise.
    const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
    await command.run(args, config);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      fail(`${err.message}\nUsage: npx token-vault ${command.usage}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      fail(`Configuration error: ${err.message}`);
      return 1;
    }
    if (
      err instanceof CliError ||
      err instanceof DatabaseInUseError ||
      err instanceof KeyProviderError ||
      err instanceof MasterKeysMismatchError
    ) {
      fail(err.message);
      return 1;
    }
    fail(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}
