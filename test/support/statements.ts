import { Client } from 'pg';

/**
 * The text of each statement sent through `pg` (both databases speak through it) while `work` runs. A
 * rate-limit lease is taken again in the background, whichever request spent it: it is left out, as not the
 * request's own work.
 */
export async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]): unknown {
    const first = args[0] as string | { text: string };
    sent.push(typeof first === 'string' ? first : first.text);
    return query.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = query;
  }
  return sent.filter((text) => !/"rate_limits"/.test(text));
}
