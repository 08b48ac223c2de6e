import { createInterface } from 'node:readline';
import { CliError, Command, out, parse, UsageError } from './kit';

export const unsealCommand: Command = {
  usage: 'unseal [--url <vault base URL>]',
  summary:
    'Give unseal shares (one per line on standard input, e.g. `printf "%s\\n" "$SHARE" | ...`) to a vault ' +
    'started sealed; default URL http://127.0.0.1:<PORT>.',
  async run(args, config) {
    const { values } = parse(args, { url: { type: 'string' } });
    const base = vaultUrl(values.url, config.port);
    let status: { sealed?: boolean; shares_received?: number } = {};
    for await (const line of createInterface({ input: process.stdin })) {
      const share = line.replace(/^share \d+ of \d+: /, '').trim();
      if (share === '') {
        continue;
      }
      const response = await fetch(`${base}/unseal`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ share }),
      });
      const body = (await response.json().catch(() => ({}))) as { detail?: string };
      if (!response.ok) {
        throw new CliError(`The vault refused the share (${response.status}): ${body.detail ?? ''}`);
      }
      status = body as typeof status;
      if (status.sealed === false) {
        break;
      }
    }
    out(
      status.sealed === false
        ? 'The vault is unsealed.'
        : `Still sealed: ${status.shares_received ?? 0} share(s) received; more key holders must run unseal.`,
    );
  },
};

/** The vault's base URL from --url, or the local one on PORT. */
export function vaultUrl(url: unknown, port: number): string {
  const base = typeof url === 'string' ? url.replace(/\/+$/, '') : `http://127.0.0.1:${port}`;
  if (!/^https?:\/\//.test(base)) {
    throw new UsageError('--url must be an http(s) URL');
  }
  return base;
}
