'use strict';
/*
 * A sandbox worker process: holds one V8 isolate (isolated-vm) and runs tenant code in a fresh context per
 * invocation. It is forked with an empty environment and the permission model, so even code that escaped
 * the isolate would find no secret, no file system and no database. The parent enforces the wall-clock
 * deadline by killing this process; the limits here only end synchronous runs early.
 *
 * Messages travel as frames (frames.js) on file descriptor 3, a pipe to the host.
 * Messages in:  init { ivmPath, memoryMb, maxResultBytes, maxHostBytes, prelude, modules },
 *               run { id, code, codeHash, input, timeoutMs }, host-result { id, callId, ok, value | error }
 * Messages out: ready, host-call { id, callId, name } + the arguments as body,
 *               done { id, ok, error?, retire? } + the result as body
 * Results and arguments over the limits are refused here, so they never cross to the host.
 */
const net = require('node:net');
const { encodeFrame, frameReader } = require('./frames.js');

const MAX_SCRIPTS = 64;
const channel = new net.Socket({ fd: 3, readable: true, writable: true });

let ivm;
let isolate;
let memoryMb;
let maxResultBytes;
let maxHostBytes;
let preludeScript;
/** name -> compiled module script (evaluated per context, only when required). */
const moduleScripts = new Map();
/** codeHash -> compiled user script; Map keeps insertion order, so this is a small LRU. */
const userScripts = new Map();
const pendingHostCalls = new Map();
let nextCallId = 1;

function send(message, body, then) {
  if (channel.writable) {
    channel.write(encodeFrame(message, body), then);
  } else if (then !== undefined) {
    then();
  }
}

function init(message) {
  ivm = require(message.ivmPath);
  memoryMb = message.memoryMb;
  maxResultBytes = message.maxResultBytes;
  maxHostBytes = message.maxHostBytes;
  newIsolate(message);
  send({ type: 'ready' });
  warmSpare();
}

let moduleSources;
let preludeSource;
function newIsolate(message) {
  if (message !== undefined) {
    moduleSources = message.modules;
    preludeSource = message.prelude;
  }
  isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  preludeScript = isolate.compileScriptSync(preludeSource, { filename: 'vault-prelude.js' });
  moduleScripts.clear();
  userScripts.clear();
  for (const [name, source] of Object.entries(moduleSources)) {
    moduleScripts.set(
      name,
      isolate.compileScriptSync(`(function (module, exports, require) {${source}\n})`, { filename: name }),
    );
  }
}

/**
 * A context no code has run in, the prelude evaluated: made while this process is idle, because V8 takes
 * ~0.6 ms to build a context and a run should not wait for it. A run takes it and releases it when done;
 * no context ever serves two runs.
 */
let spare = null;
let warming = null;
const PRELUDE_TIMEOUT_MS = 1000;

function freshContext(timeoutMs) {
  const context = isolate.createContextSync();
  const jail = context.global;
  jail.setSync('globalThis', jail.derefInto());
  preludeScript.runSync(context, { timeout: timeoutMs });
  return context;
}

function takeContext(timeoutMs) {
  const context = spare;
  spare = null;
  return context ?? freshContext(timeoutMs);
}

function warmSpare() {
  if (spare !== null || warming !== null) {
    return;
  }
  warming = setImmediate(() => {
    warming = null;
    if (spare !== null || isolate.isDisposed) {
      return;
    }
    try {
      spare = freshContext(PRELUDE_TIMEOUT_MS);
    } catch {
      // Out of memory or the like: the next run builds its own context and reports what happens then.
      spare = null;
    }
  });
}

function userScript(code, codeHash) {
  let script = userScripts.get(codeHash);
  if (script !== undefined) {
    userScripts.delete(codeHash);
    userScripts.set(codeHash, script);
    return script;
  }
  // The wrapper opens on the code's first line, so compile errors keep the code's own line numbers.
  script = isolate.compileScriptSync(`(function (exports, require, module) {${code}\n})`, {
    filename: 'formula.js',
  });
  userScripts.set(codeHash, script);
  if (userScripts.size > MAX_SCRIPTS) {
    const oldest = userScripts.keys().next().value;
    userScripts.get(oldest).release();
    userScripts.delete(oldest);
  }
  return script;
}

/** Called from inside the isolate (through a Reference) for bridged host calls: strings in, a string out. */
function hostCall(id, name, argsJson) {
  if (typeof name !== 'string' || typeof argsJson !== 'string') {
    return Promise.reject(new Error('invalid host call'));
  }
  if (Buffer.byteLength(argsJson, 'utf8') > maxHostBytes) {
    return Promise.reject(
      new Error(JSON.stringify({ status: 413, detail: 'The call arguments are too large.' })),
    );
  }
  const callId = nextCallId++;
  return new Promise((resolve, reject) => {
    pendingHostCalls.set(callId, { resolve, reject });
    send({ type: 'host-call', id, callId, name }, argsJson);
  });
}

async function run(message) {
  const { id, code, codeHash, input, timeoutMs } = message;
  let context;
  try {
    const script = userScript(code, codeHash);
    // The steps before the call are synchronous: each async call of isolated-vm is a hop to its thread pool
    // and back, and this process serves one run at a time anyway. The timeout bounds each step as before.
    context = takeContext(timeoutMs);
    const jail = context.global;
    const host = new ivm.Reference((name, argsJson) => hostCall(id, name, argsJson));
    const userFn = script.runSync(context, { reference: true, timeout: timeoutMs });
    // Module wrappers are function expressions: cheap to evaluate per context, run only when required.
    const names = [...moduleScripts.keys()];
    const moduleFns = [];
    for (const name of names) {
      moduleFns.push(moduleScripts.get(name).runSync(context, { reference: true }).derefInto());
    }
    const start = jail.getSync('__vault_start', { reference: true });
    const args = [userFn.derefInto(), host, input, new ivm.ExternalCopy(names).copyInto(), ...moduleFns];
    const result = await start.apply(undefined, args, {
      result: { promise: true, copy: true },
      timeout: timeoutMs,
    });
    if (typeof result === 'string' && Buffer.byteLength(result, 'utf8') > maxResultBytes) {
      send({ type: 'done', id, ok: false, error: { kind: 'too_large' } });
    } else {
      send({ type: 'done', id, ok: true }, result);
    }
  } catch (err) {
    // An isolate disposed for memory cannot run again: say so, so no run is sent here before the exit.
    const disposed = isolate.isDisposed;
    // Out of memory: this process ends (once the answer is out) and the parent starts a fresh one.
    send({ type: 'done', id, ok: false, error: describe(err), retire: disposed }, '', () => {
      if (disposed) {
        process.exit(3);
      }
    });
  } finally {
    if (context !== undefined && !isolate.isDisposed) {
      context.release();
    }
    warmSpare();
  }
}

/** Failures of the sandbox itself (compile errors, limits); thrown values are reported by the prelude. */
function describe(err) {
  const message = err && typeof err.message === 'string' ? err.message : 'sandbox failure';
  if (isolate.isDisposed || /memory limit/i.test(message)) {
    return { kind: 'memory' };
  }
  if (/timed out/i.test(message)) {
    return { kind: 'timeout' };
  }
  if (err && err.name === 'SyntaxError') {
    return { kind: 'error', message: `SyntaxError: ${message}`.slice(0, 1000) };
  }
  return { kind: 'error', message: message.slice(0, 1000) };
}

function onMessage(message) {
  switch (message && message.type) {
    case 'init':
      init(message);
      break;
    case 'run':
      void run(message);
      break;
    case 'host-result': {
      const pending = pendingHostCalls.get(message.callId);
      if (pending !== undefined) {
        pendingHostCalls.delete(message.callId);
        if (message.ok) {
          pending.resolve(message.value);
        } else {
          pending.reject(new Error(JSON.stringify(message.error)));
        }
      }
      break;
    }
    default:
      break;
  }
}

channel.on('data', frameReader(onMessage));
channel.on('close', () => process.exit(0));
channel.on('error', () => process.exit(0));
