import { createInterface } from 'node:readline';
import { CliError, Command, out, parse } from './kit';
import { vaultUrl } from './unseal';

export const unsealReset: Command = {
  usage: 'unseal:reset [--url <vault base URL>]',
  summary:
    'Drop every unseal share a sealed vault holds, so key holders start again; one key holder proves who asks ' +
    'with their share on standard input (it is not kept). Default URL http://127.0.0.1:<PORT>.',
  async run(args, config) {
    const { values } = parse(args, { url: { type: 'string' } });
    const base = vaultUrl(values.url, config.port);
    let share = '';
    for await (const line of createInterface({ input: process.stdin })) {
      share = line.replace(/^share \d+ of \d+: /, '').trim();
      if (share !== '') {
        break;
      }
    }
    if (share === '') {
      throw new CliError('Give one unseal share on standard input: it proves a key holder asks.');
    }
    const response = await fetch(`${base}/unseal/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ share }),
    });
    const body = (await response.json().catch(() => ({}))) as { detail?: string; sealed?: boolean };
    if (!response.ok) {
      throw new CliError(`The vault refused the reset (${response.status}): ${body.detail ?? ''}`);
    }
    out(
      body.sealed === false ? 'The vault is not sealed: nothing to reset.' : 'Every held share was dropped.',
    );
  },
};
