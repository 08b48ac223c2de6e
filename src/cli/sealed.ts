import { INestApplicationContext } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { ApiError } from '../common/api-error';
import { AppConfig } from '../config/app-config';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { UnsealShares } from '../crypto/unseal-shares.service';
import { CliError, fail, withAppContext } from './kit';

/**
 * withAppContext for the commands that need the master keys (tenant:create, keys:*). On a sealed deployment
 * (VAULT_SEALED=true) the command takes the key holders' shares itself and checks them as POST /unseal does,
 * so the whole master key is never in one person's environment, only in this process for the command: one
 * share per file in VAULT_UNSEAL_SHARE_FILES, or else one per line on standard input, each holder typing
 * theirs when prompted (hidden at a terminal).
 */
export function withMasterKeys<T>(
  config: AppConfig,
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  return withAppContext(config, async (app) => {
    if (app.get(MasterKeyring).sealed) {
      const files = config.keyCustody.unsealShareFiles;
      await unsealWith(app, files.length > 0 ? fromFiles(files) : fromStdin());
    }
    return fn(app);
  });
}

async function unsealWith(app: INestApplicationContext, shares: AsyncIterable<string>): Promise<void> {
  let given = 0;
  for await (const share of shares) {
    given += 1;
    try {
      if (!(await app.get(UnsealShares).give(share)).sealed) {
        return;
      }
    } catch (err) {
      throw err instanceof ApiError ? new CliError(`Unseal share ${given} refused: ${err.detail}`) : err;
    }
  }
  throw new CliError(
    `The vault is sealed (VAULT_SEALED=true) and the ${given} share(s) given do not unseal it: more key ` +
      'holders must give theirs (VAULT_UNSEAL_SHARE_FILES, or one per line on standard input).',
  );
}

/** The first non-empty line of each file; a file's content is never part of an error. */
async function* fromFiles(files: string[]): AsyncGenerator<string> {
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new CliError(
        `Cannot read unseal share file ${i + 1} of ${files.length} (VAULT_UNSEAL_SHARE_FILES): ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
    yield shareText(text.split('\n').find((line) => line.trim() !== '') ?? '');
  }
}

/** One share per line; at a terminal each holder is prompted on stderr and the input is not echoed. */
async function* fromStdin(): AsyncGenerator<string> {
  const terminal = process.stdin.isTTY === true;
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input: process.stdin, output: silent, terminal });
  const prompt = (n: number): void => {
    if (terminal) {
      fail(`The vault is sealed: key holder ${n}, type or paste your unseal share and press Enter (hidden).`);
    }
  };
  let n = 1;
  prompt(n);
  try {
    for await (const line of lines) {
      const share = shareText(line);
      if (share !== '') {
        yield share;
        prompt(++n);
      }
    }
  } finally {
    lines.close();
  }
}

/** A share as keys:split printed it ('share 2 of 5: <share>') or alone. */
function shareText(line: string): string {
  return line.replace(/^share \d+ of \d+: /, '').trim();
}
