import { compileErrorOf } from './compile-check';

describe('compileErrorOf', () => {
  it('accepts both CommonJS export forms and a top-level return', () => {
    expect(compileErrorOf('module.exports = async function (req) { return { raw: req.args }; };')).toBeNull();
    expect(compileErrorOf('module.exports = async (req) => ({ raw: req.args });')).toBeNull();
    expect(compileErrorOf('if (true) { return; }\nmodule.exports = async () => ({});')).toBeNull();
  });

  it('reports the message, line and column of a syntax error', () => {
    const error = compileErrorOf('module.exports = async function (req) {\n  const x = ;\n};');
    expect(error).toEqual({ message: expect.stringMatching(/Unexpected token/), line: 2, column: 13 });
  });

  it('reports an unterminated body on a later line', () => {
    const error = compileErrorOf('module.exports = async function (req) {\n  return 1;\n');
    expect(error?.line).toBeGreaterThanOrEqual(2);
    expect(error?.message).toMatch(/Unexpected end of input|missing \)/);
  });

  it('never runs the code', () => {
    (globalThis as Record<string, unknown>).__ran = false;
    expect(compileErrorOf('globalThis.__ran = true; module.exports = async () => ({});')).toBeNull();
    expect((globalThis as Record<string, unknown>).__ran).toBe(false);
  });

  it('rejects code that tries to close the wrapper early', () => {
    expect(compileErrorOf('});\n(function () {')).not.toBeNull();
  });
});
