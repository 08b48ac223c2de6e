import { Transform } from 'class-transformer';

/** Repeatable query parameters (`?id=a&id=b`) arrive as a string or an array; always give an array. */
export function ToArray(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    value === undefined ? undefined : Array.isArray(value) ? value : [value],
  );
}

/** SQL LIKE pattern for the spec's "wildcard" name filters: `*` matches anything, other characters are literal. */
export function wildcardToLike(pattern: string): string {
  const escaped = pattern.replace(/[\\%_]/g, (c) => `\\${c}`);
  return escaped.includes('*') ? escaped.replace(/\*/g, '%') : `%${escaped}%`;
}
