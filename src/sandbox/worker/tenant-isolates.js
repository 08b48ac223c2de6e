'use strict';
/*
 * The isolates of one sandbox worker, one per tenant: a run only ever meets the heap, compiled scripts and
 * contexts of its own tenant's isolate, never another tenant's. The most recently used isolates stay warm
 * (created once, the prelude and modules compiled once, a spare context made while idle); the least recently
 * used beyond MAX_ISOLATES is disposed. Each isolate has the configured memory limit of its own, so a worker
 * may hold MAX_ISOLATES times that limit: kept at 2 (docs/operations.md, Sizes).
 */
const MAX_ISOLATES = 2;
const MAX_SCRIPTS = 64;
const PRELUDE_TIMEOUT_MS = 1000;

class TenantIsolate {
  constructor(ivm, settings, sequence) {
    this.sequence = sequence;
    this.isolate = new ivm.Isolate({ memoryLimit: settings.memoryMb });
    this.prelude = this.isolate.compileScriptSync(settings.prelude, { filename: 'vault-prelude.js' });
    /** name -> compiled module script (evaluated per context, only when required). */
    this.modules = new Map();
    for (const [name, source] of Object.entries(settings.modules)) {
      this.modules.set(
        name,
        this.isolate.compileScriptSync(`(function (module, exports, require) {${source}\n})`, {
          filename: name,
        }),
      );
    }
    /** codeHash -> compiled user script; Map keeps insertion order, so this is a small LRU. */
    this.scripts = new Map();
    this.spare = null;
    this.warming = null;
  }

  get disposed() {
    return this.isolate.isDisposed;
  }

  userScript(code, codeHash) {
    let script = this.scripts.get(codeHash);
    if (script !== undefined) {
      this.scripts.delete(codeHash);
      this.scripts.set(codeHash, script);
      return script;
    }
    // The wrapper opens on the code's first line, so compile errors keep the code's own line numbers.
    script = this.isolate.compileScriptSync(`(function (exports, require, module) {${code}\n})`, {
      filename: 'formula.js',
    });
    this.scripts.set(codeHash, script);
    if (this.scripts.size > MAX_SCRIPTS) {
      const oldest = this.scripts.keys().next().value;
      this.scripts.get(oldest).release();
      this.scripts.delete(oldest);
    }
    return script;
  }

  /**
   * A context no code has run in, the prelude evaluated: the spare one made while the process was idle (V8
   * takes about a millisecond to build a context), else a new one. No context ever serves two runs.
   */
  takeContext(timeoutMs) {
    const context = this.spare;
    this.spare = null;
    return context ?? this.freshContext(timeoutMs);
  }

  freshContext(timeoutMs) {
    const context = this.isolate.createContextSync();
    const jail = context.global;
    jail.setSync('globalThis', jail.derefInto());
    this.prelude.runSync(context, { timeout: timeoutMs });
    return context;
  }

  /** Makes the spare context once the process has nothing else to do. */
  warmSpare() {
    if (this.spare !== null || this.warming !== null || this.disposed) {
      return;
    }
    this.warming = setImmediate(() => {
      this.warming = null;
      if (this.spare !== null || this.disposed) {
        return;
      }
      try {
        this.spare = this.freshContext(PRELUDE_TIMEOUT_MS);
      } catch {
        // Out of memory or the like: the next run builds its own context and reports what happens then.
        this.spare = null;
      }
    });
  }

  dispose() {
    if (this.warming !== null) {
      clearImmediate(this.warming);
      this.warming = null;
    }
    if (!this.disposed) {
      this.isolate.dispose();
    }
  }
}

/** tenant -> TenantIsolate; Map keeps insertion order, so the first entry is the least recently used. */
class TenantIsolates {
  constructor(ivm, settings) {
    this.ivm = ivm;
    this.settings = settings;
    this.byTenant = new Map();
    this.created = 0;
  }

  /** The tenant's isolate, made (and the least recently used one disposed) when it has none. */
  for(tenant) {
    let entry = this.byTenant.get(tenant);
    if (entry !== undefined && entry.disposed) {
      this.byTenant.delete(tenant);
      entry = undefined;
    }
    if (entry !== undefined) {
      this.byTenant.delete(tenant);
      this.byTenant.set(tenant, entry);
      return entry;
    }
    entry = new TenantIsolate(this.ivm, this.settings, ++this.created);
    this.byTenant.set(tenant, entry);
    while (this.byTenant.size > MAX_ISOLATES) {
      const [oldest, isolate] = this.byTenant.entries().next().value;
      this.byTenant.delete(oldest);
      isolate.dispose();
    }
    return entry;
  }
}

module.exports = { TenantIsolates, MAX_ISOLATES };
