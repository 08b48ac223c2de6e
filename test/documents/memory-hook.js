'use strict';
/**
 * Preloaded (NODE_OPTIONS=--require) into the vault test/documents/streaming.e2e-spec.ts spawns: on SIGUSR2,
 * a full collection, then the process's live memory (heap and Buffers) as one line of output. A process of
 * its own, so no other test file's leftovers count.
 */
const { setFlagsFromString } = require('node:v8');
const { runInNewContext } = require('node:vm');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

process.on('SIGUSR2', () => {
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  process.stdout.write(`live-memory ${heapUsed + arrayBuffers}\n`);
});
