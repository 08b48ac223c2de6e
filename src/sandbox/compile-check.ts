import { compileFunction } from 'node:vm';

export interface CompileError {
  message: string;
  line: number;
  column: number;
}

const FILENAME = 'formula.js';

/**
 * Parses tenant code as a CommonJS module without running it: null when it compiles, else the compiler's
 * message with the code's line and column (1-based). Nothing of the code is evaluated.
 */
export function compileErrorOf(code: string): CompileError | null {
  try {
    // A function body, as CommonJS compiles a module: code cannot close a wrapper of ours early.
    compileFunction(code, ['exports', 'require', 'module'], { filename: FILENAME });
    return null;
  } catch (err) {
    // By name: errors from the vm module may come from another realm (Jest), where instanceof fails.
    const { name, message, stack } = err as { name?: unknown; message?: unknown; stack?: unknown };
    if (name !== 'SyntaxError' || typeof message !== 'string' || typeof stack !== 'string') {
      return { message: 'The code could not be compiled.', line: 1, column: 1 };
    }
    const [location = '', sourceLine = '', caretLine = ''] = stack.split('\n');
    const lineMatch = new RegExp(`^${FILENAME.replace('.', '\\.')}:(\\d+)$`).exec(location);
    const line = lineMatch !== null ? Number(lineMatch[1]) : 1;
    const caret = caretLine.indexOf('^');
    const column = caret >= 0 && sourceLine.length > 0 ? caret + 1 : 1;
    return { message, line, column };
  }
}
