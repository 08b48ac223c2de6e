'use strict';
/*
 * A sandbox worker process: holds a V8 isolate (isolated-vm) per tenant it serves (tenant-isolates.js) and
 * runs tenant code in a fresh context of its tenant's isolate per invocation. It is forked with an empty
 * environment and the permission model, so even code that escaped the isolate would find no secret, no file
 * system and no database. The parent enforces the wall-clock deadline by killing this process; the limits
 * here only end synchronous runs early.
 *
 * Messages travel as frames (frames.js) on file descriptor 3, a pipe to the host.
 * Messages in:  init { ivmPath, memoryMb, maxResultBytes, maxHostBytes, prelude, modules },
 *               run { id, tenant, code, codeHash, timeoutMs } + the run's input (JSON text) as body,
 *               host-result { id, callId, ok, value | error }
 * Messages out: ready, host-call { id, callId, name } + the arguments as body,
 *               done { id, ok, error?, retire?, isolate? } + the result as body (isolate: which of this
 *               process's isolates ran it, numbered from 1 as they are made)
 * Results and arguments over the limits are refused here, so they never cross to the host.
 */
const net = require('node:net');
const { encodeFrame, frameReader } = require('./frames.js');
const { TenantIsolates } = require('./tenant-isolates.js');

const channel = new net.Socket({ fd: 3, readable: true, writable: true });

let ivm;
let maxResultBytes;
let maxHostBytes;
/** One isolate per tenant (tenant-isolates.js); made by init. */
let isolates;
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
  maxResultBytes = message.maxResultBytes;
  maxHostBytes = message.maxHostBytes;
  isolates = new TenantIsolates(ivm, {
    memoryMb: message.memoryMb,
    prelude: message.prelude,
    modules: message.modules,
  });
  send({ type: 'ready' });
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

async function run(message, input) {
  const { id, tenant, code, codeHash, timeoutMs } = message;
  let sandbox;
  let context;
  // Every Reference into the context holds it alive until it is released or this process's own heap collects
  // its handle, which is rare here: released contexts then pile up in the isolate's heap towards its limit.
  const references = [];
  try {
    sandbox = isolates.for(tenant);
    const script = sandbox.userScript(code, codeHash);
    // The steps before the call are synchronous: each async call of isolated-vm is a hop to its thread pool
    // and back, and this process serves one run at a time anyway. The timeout bounds each step as before.
    context = sandbox.takeContext(timeoutMs);
    const jail = context.global;
    const host = new ivm.Reference((name, argsJson) => hostCall(id, name, argsJson));
    references.push(host);
    const userFn = script.runSync(context, { reference: true, timeout: timeoutMs });
    references.push(userFn);
    // Module wrappers are function expressions: cheap to evaluate per context, run only when required.
    const names = [...sandbox.modules.keys()];
    const moduleFns = [];
    for (const name of names) {
      const moduleFn = sandbox.modules.get(name).runSync(context, { reference: true });
      references.push(moduleFn);
      moduleFns.push(moduleFn.derefInto());
    }
    const start = jail.getSync('__vault_start', { reference: true });
    references.push(start);
    const args = [userFn.derefInto(), host, input, new ivm.ExternalCopy(names).copyInto(), ...moduleFns];
    // The call too, up to the code's first await (most reactors' whole run); the promise it returns settles
    // once the code's own awaits (host calls) have. The timeout bounds the synchronous part, the host the rest.
    const result = await start.applySync(undefined, args, {
      result: { promise: true, copy: true },
      timeout: timeoutMs,
    });
    const isolate = sandbox.sequence;
    if (typeof result === 'string' && Buffer.byteLength(result, 'utf8') > maxResultBytes) {
      send({ type: 'done', id, ok: false, error: { kind: 'too_large' }, isolate });
    } else {
      send({ type: 'done', id, ok: true, isolate }, result);
    }
  } catch (err) {
    // An isolate disposed for memory cannot run again: say so, so no run is sent here before the exit.
    const disposed = sandbox === undefined || sandbox.disposed;
    // Out of memory: this process ends (once the answer is out) and the parent starts a fresh one.
    send({ type: 'done', id, ok: false, error: describe(err, disposed), retire: disposed }, '', () => {
      if (disposed) {
        process.exit(3);
      }
    });
  } finally {
    if (context !== undefined && !sandbox.disposed) {
      for (const reference of references) {
        reference.release();
      }
      context.release();
    }
    sandbox?.warmSpare();
  }
}

/** Failures of the sandbox itself (compile errors, limits); thrown values are reported by the prelude. */
function describe(err, disposed) {
  const message = err && typeof err.message === 'string' ? err.message : 'sandbox failure';
  if (disposed || /memory limit/i.test(message)) {
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

function onMessage(message, body) {
  switch (message && message.type) {
    case 'init':
      init(message);
      break;
    case 'run':
      void run(message, body);
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
