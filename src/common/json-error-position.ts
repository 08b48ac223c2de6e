/**
 * Where a JSON text first breaks: the 0-based offset of the first character that cannot continue a
 * valid document, or null when it parses. Used to tell a caller where a body broke without quoting it
 * (the engine's own messages quote the text, and only some name a position).
 */
class BreaksAt extends Error {
  constructor(readonly position: number) {
    super('invalid JSON');
  }
}

export function jsonErrorPosition(text: string): number | null {
  let i = 0;
  const MAX_DEPTH = 10_000;
  const ws = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) {
      i++;
    }
  };
  const fail = (): never => {
    throw new BreaksAt(i);
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) {
        fail();
      }
      i++;
    }
  };
  const string = (): void => {
    i++; // opening quote
    while (i < text.length) {
      const ch = text[i];
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        i++;
        const esc = text[i];
        if (esc === 'u') {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) {
              i += k;
              fail();
            }
          }
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(esc ?? 'x')) {
          fail();
        }
        i++;
        continue;
      }
      if (ch < ' ') {
        fail();
      }
      i++;
    }
    fail();
  };
  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (match === null || match[0] === '' || match[0] === '-') {
      fail();
    }
    i += (match as RegExpExecArray)[0].length;
  };
  // Iterative over containers, so deep nesting cannot overflow the stack.
  const stack: ('{' | '[')[] = [];
  const value = (): void => {
    // A loop rather than a call per opened container: `[[[[…` as deep as MAX_DEPTH uses no stack.
    for (;;) {
      ws();
      const ch = text[i];
      if (ch === '{' || ch === '[') {
        if (stack.length >= MAX_DEPTH) {
          fail();
        }
        stack.push(ch);
        i++;
        ws();
        if (text[i] === (ch === '{' ? '}' : ']')) {
          stack.pop();
          i++;
          return;
        }
        if (ch === '{') {
          key();
        }
        continue;
      }
      if (ch === '"') {
        string();
      } else if (ch === 't') {
        literal('true');
      } else if (ch === 'f') {
        literal('false');
      } else if (ch === 'n') {
        literal('null');
      } else if (ch === '-' || (ch >= '0' && ch <= '9')) {
        number();
      } else {
        fail();
      }
      return;
    }
  };
  const key = (): void => {
    ws();
    if (text[i] !== '"') {
      fail();
    }
    string();
    ws();
    if (text[i] !== ':') {
      fail();
    }
    i++;
  };
  try {
    value();
    for (;;) {
      ws();
      const open = stack[stack.length - 1];
      if (open === undefined) {
        break;
      }
      if (text[i] === ',') {
        i++;
        if (open === '{') {
          key();
        }
        value();
        continue;
      }
      if (text[i] === (open === '{' ? '}' : ']')) {
        stack.pop();
        i++;
        continue;
      }
      fail();
    }
    ws();
    return i < text.length ? i : null;
  } catch (err) {
    if (err instanceof BreaksAt) {
      return Math.min(err.position, text.length);
    }
    throw err;
  }
}
