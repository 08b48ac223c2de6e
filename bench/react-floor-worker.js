'use strict';
/**
 * A sandbox worker process of the react floor (bench/react-floor.js), started as the vault starts its own
 * (src/sandbox/worker-process.ts: no environment, the permission model, --jitless, a pipe on fd 3 carrying the
 * vault's frames, src/sandbox/worker/frames.js). It holds one warm isolate (bench/sandbox-run.js) with the
 * prelude, the modules and the bench reactor compiled once, and makes a spare context once a run is answered,
 * so a run finds one ready, as the vault's worker does.
 * Messages in:  init { ivmPath, memoryMb, prelude, modules, code }, run { id } + the input (JSON text) as body
 * Messages out: ready, done { id, ok, error? } + the result (JSON text) as body
 */
const net = require('node:net');
const { encodeFrame, frameReader } = require('../dist/src/sandbox/worker/frames.js');
const { warmIsolate } = require('./sandbox-run.js');

const channel = new net.Socket({ fd: 3, readable: true, writable: true });
let sandbox = null;
let spare = null;

function send(message, body) {
  if (channel.writable) {
    channel.write(encodeFrame(message, body));
  }
}

function warmSpare() {
  setImmediate(() => {
    spare ??= sandbox.prepare();
  });
}

async function run(id, input) {
  const context = spare ?? sandbox.prepare();
  spare = null;
  try {
    await sandbox.run(context, input, (result) => send({ type: 'done', id, ok: true }, result));
  } catch (err) {
    const message = err && typeof err.message === 'string' ? err.message : 'sandbox failure';
    send({ type: 'done', id, ok: false, error: { kind: 'error', message: message.slice(0, 1000) } });
  }
  warmSpare();
}

channel.on(
  'data',
  frameReader((message, body) => {
    if (message.type === 'init') {
      sandbox = warmIsolate(require(message.ivmPath), message);
      spare = sandbox.prepare();
      send({ type: 'ready' });
    } else if (message.type === 'run') {
      void run(message.id, body);
    }
  }),
);
channel.on('close', () => process.exit(0));
channel.on('error', () => process.exit(0));
