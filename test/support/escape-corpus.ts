/**
 * Sandbox escape attempts, after the techniques of the published vm2 and isolated-vm advisories. Each is
 * reactor code that sets `got` to whatever host object or secret it reached; a contained attempt leaves
 * `got` empty, or throws. Replayed through HTTP by test/reactors/escape.e2e-spec.ts.
 */
export interface EscapeAttempt {
  name: string;
  /** Statements that may assign `got`; `req` is the reactor request. */
  body: string;
}

export const ESCAPE_CORPUS: EscapeAttempt[] = [
  { name: 'global process', body: 'got = globalThis.process;' },
  { name: 'bare process identifier', body: 'got = typeof process !== "undefined" ? process : null;' },
  { name: 'this.constructor.constructor', body: 'got = this.constructor.constructor("return process")();' },
  { name: 'object constructor chain', body: 'got = ({}).constructor.constructor("return process")();' },
  {
    name: 'Function returning the global',
    body: 'const g = Function("return this")(); got = g.process || g.require || g.Buffer;',
  },
  { name: 'eval of process', body: 'got = eval("typeof process === \'object\' ? process : null");' },
  { name: 'require fs', body: 'got = require("fs").readFileSync("/etc/passwd", "utf8");' },
  { name: 'require node:fs', body: 'got = require("node:fs");' },
  { name: 'require child_process', body: 'got = require("child_process").execSync("id").toString();' },
  { name: 'require module', body: 'got = require("module");' },
  { name: 'require.call with another this', body: 'got = require.call({}, "fs");' },
  { name: 'require cache and main', body: 'got = require.cache || require.main || require.resolve;' },
  { name: 'dynamic import', body: 'got = await import("fs");' },
  {
    name: 'Error.prepareStackTrace frames',
    body: `Error.prepareStackTrace = (e, frames) => frames;
      const frames = new Error().stack;
      for (const f of frames || []) { const t = f.getThis && f.getThis(); if (t && (t.process || t.require)) got = t.process || t.require; }`,
  },
  {
    name: 'prepareStackTrace on a host-side error',
    body: `Error.prepareStackTrace = (e, frames) => { for (const f of frames) { try { const fn = f.getFunction(); if (fn) got = fn.constructor("return process")(); } catch (x) {} } return ''; };
      try { require("fs"); } catch (e) { e.stack; }
      try { null.f(); } catch (e) { e.stack; }`,
  },
  {
    name: 'error named with a Symbol',
    body: 'const e = new Error("x"); e.name = Symbol("evil"); try { throw e; } catch (c) { got = c.constructor.constructor("return process")(); }',
  },
  {
    name: 'Proxy traps on a thrown value',
    body: `throw new Proxy({}, { get(t, key) { return function () { return this.constructor.constructor("return process")(); }; } });`,
  },
  {
    name: 'Proxy as the exported handler result',
    body: 'return new Proxy({}, { get() { return Function("return this")().process; }, ownKeys() { return ["raw"]; } });',
  },
  {
    name: 'Promise species',
    body: `class P extends Promise { static get [Symbol.species]() { return function (exec) { exec((v) => { got = v && v.process; }, () => {}); }; } }
      await P.resolve(1).then(() => 1);`,
  },
  {
    name: 'thenable result resolving to host objects',
    body: 'return { then(resolve) { resolve({ raw: { got: String(Function("return this")().process) } }); } };',
  },
  {
    name: 'Object.prototype.then hijack',
    body: 'Object.prototype.then = function (r) { got = this && this.constructor && this.constructor.constructor("return process")(); delete Object.prototype.then; r(this); };',
  },
  {
    name: 'arguments.callee.caller chain',
    body: `got = (function f() { let c = arguments.callee.caller; let hops = 0;
        while (c && hops++ < 20) { try { const p = c.constructor("return process")(); if (p) return p; } catch (e) {} c = c.caller; }
        return null; })();`,
  },
  {
    name: 'prototype patching of JSON used by the bridge',
    body: `const parse = JSON.parse; JSON.parse = function (s) { const v = parse(s); got = this && this.process; return v; };
      JSON.stringify = function () { return '{"ok":true,"value":{"raw":{"escaped":false}}}'; };`,
  },
  {
    name: 'WeakMap and Array prototype patching',
    body: `const set = WeakMap.prototype.set; WeakMap.prototype.set = function (k, v) { if (k && k.process) got = k.process; return set.call(this, k, v); };
      Array.prototype.push = function () { got = got || (this.constructor.constructor("return process")()); return 0; };
      [].push(1);`,
  },
  {
    name: 'inspect symbol on the result',
    body: 'return { raw: { [Symbol.for("nodejs.util.inspect.custom")]: (d, o, inspect) => { got = inspect; return "x"; } } };',
  },
  {
    name: 'toJSON and Symbol.toPrimitive on the thrown value',
    body: 'throw { toJSON() { return { p: String(Function("return this")().process) }; }, [Symbol.toPrimitive]() { return String(globalThis.require); } };',
  },
  {
    name: 'SharedArrayBuffer and Atomics',
    body: 'const sab = new SharedArrayBuffer(16); const ia = new Int32Array(sab); Atomics.store(ia, 0, 1); Atomics.notify(ia, 0, 1); got = globalThis.process;',
  },
  {
    name: 'host bridge internals left on the global',
    body: 'got = globalThis.__vault_start || globalThis.ivm || globalThis._ivm || globalThis.host || globalThis.__host;',
  },
  {
    name: 'stack traces naming host files',
    body: 'const s = String(new Error("x").stack); if (/node_modules|\\/work\\/|\\/app\\/|sandbox-worker|dist\\//.test(s)) got = s;',
  },
  {
    name: 'environment variables',
    body: 'got = (Function("return this")().process || {}).env;',
  },
  {
    name: 'Reflect and getPrototypeOf on require',
    body: 'const proto = Reflect.getPrototypeOf(require); got = proto.constructor("return process")();',
  },
  {
    name: 'WebAssembly reaching the host',
    body: 'const mod = new WebAssembly.Module(new Uint8Array([0,97,115,109,1,0,0,0])); const inst = new WebAssembly.Instance(mod, {}); got = inst.exports.process || globalThis.process;',
  },
  {
    name: 'timers as a host channel',
    body: 'got = typeof setTimeout === "function" ? setTimeout : (typeof setImmediate === "function" ? setImmediate : null);',
  },
  {
    name: 'bt bridge without an application',
    body: 'got = req.bt;',
  },
];

/** Strings that must never appear in a reactor response: the test canary secret and host paths. */
export const LEAK_MARKERS = [/tv-canary-/, /root:x:0:0/, /node_modules/, /VAULT_MASTER_KEYS/, /uid=\d+/];
