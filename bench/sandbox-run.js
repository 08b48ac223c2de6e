'use strict';
/**
 * One warm isolate as a sandbox worker holds it (src/sandbox/worker/tenant-isolates.js and sandbox-worker.js):
 * the prelude, the modules and one reactor's code compiled once. A run is in two steps, as the worker does it:
 * prepare() makes a fresh context with the prelude evaluated (the worker makes it as its spare while idle),
 * run() evaluates the code and the module wrappers in it, calls `__vault_start`, hands the result over, then
 * releases the context and every Reference into it. No host calls are bridged (the bench reactor makes none).
 *
 * Used by bench/sandbox-floor.js (in one process, no IPC) and bench/react-floor-worker.js (in the react
 * floor's worker processes). `ivm` is isolated-vm, as the caller loaded it.
 */
const TIMEOUT_MS = 1000;

function warmIsolate(ivm, { memoryMb, prelude, modules, code }) {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  const preludeScript = isolate.compileScriptSync(prelude, { filename: 'vault-prelude.js' });
  const names = Object.keys(modules);
  const moduleScripts = names.map((name) =>
    isolate.compileScriptSync(`(function (module, exports, require) {${modules[name]}\n})`, {
      filename: name,
    }),
  );
  const user = isolate.compileScriptSync(`(function (exports, require, module) {${code}\n})`, {
    filename: 'formula.js',
  });
  return {
    /** A context no code has run in, the prelude evaluated. */
    prepare() {
      const context = isolate.createContextSync();
      const jail = context.global;
      jail.setSync('globalThis', jail.derefInto());
      preludeScript.runSync(context, { timeout: TIMEOUT_MS });
      return context;
    },
    /** Runs the code in `context` on `input` (JSON text), gives `deliver` the result (JSON text), releases. */
    async run(context, input, deliver) {
      const references = [];
      const keep = (reference) => {
        references.push(reference);
        return reference;
      };
      try {
        const userFn = keep(user.runSync(context, { reference: true, timeout: TIMEOUT_MS }));
        const wrappers = moduleScripts.map((m) => keep(m.runSync(context, { reference: true })));
        const start = keep(context.global.getSync('__vault_start', { reference: true }));
        const host = keep(new ivm.Reference(() => null));
        const args = [
          userFn.derefInto(),
          host,
          input,
          new ivm.ExternalCopy(names).copyInto(),
          ...wrappers.map((w) => w.derefInto()),
        ];
        // As the worker calls it: synchronously up to the code's first await.
        deliver(
          await start.applySync(undefined, args, {
            result: { promise: true, copy: true },
            timeout: TIMEOUT_MS,
          }),
        );
      } finally {
        for (const reference of references) {
          reference.release();
        }
        context.release();
      }
    },
  };
}

module.exports = { warmIsolate };
