import { createHash } from 'node:crypto';

/**
 * One data-modifying statement (an INSERT) as a part of a larger one, its parameters numbered $1..$n of its
 * own `values`; its text holds no other `$` (no literal or dollar quote with one), since composing renumbers
 * every `$<digits>`. A name stands for one text, as for a prepared statement.
 */
export interface StatementPart {
  name: string;
  text: string;
  values: unknown[];
}

/** Composed texts and their statement names by the parts' names: built once per shape, not per request. */
const composed = new Map<string, { name: string; text: string }>();

/**
 * Parts as one statement: all but the last run as WITH queries of the last, so the database executes every
 * one of them (a data-modifying WITH query runs whether or not it is referenced) and the whole commits or
 * fails as one. A write of several rows then costs one round trip and needs no transaction of its own.
 * Parts cannot see each other's rows (one snapshot), but foreign keys between them are checked at the end
 * of the statement, when all are written.
 */
export function composeStatement(parts: StatementPart[]): StatementPart {
  if (parts.length === 1) {
    return parts[0];
  }
  const key = parts.map((p) => p.name).join('+');
  let shape = composed.get(key);
  if (shape === undefined) {
    shape = compose(parts);
    composed.set(key, shape);
  }
  return { ...shape, values: parts.flatMap((p) => p.values) };
}

function compose(parts: StatementPart[]): { name: string; text: string } {
  let offset = 0;
  const texts = parts.map((part) => {
    const base = offset;
    offset += part.values.length;
    return part.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + base}`);
  });
  const main = texts.pop() as string;
  const text = `WITH ${texts.map((t, i) => `part${i} AS (${t})`).join(',\n')}\n${main}`;
  // A hash, not the parts' names: PostgreSQL cuts statement names at 63 bytes.
  return { name: `composed-${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
}
