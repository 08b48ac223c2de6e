'use strict';
/**
 * Preloaded (`node --require bench/profile-hook.js ...`) into a bench server started with an IPC channel when
 * BENCH_PROFILE is set (bench/profile-window.js): the V8 CPU profiler of --cpu-prof, started and stopped by the
 * bench around one scenario's measured window through the inspector module, so a profile holds that window
 * only. Messages: { profile: 'start' } → { profile: 'started' }; { profile: 'stop', file } writes the
 * .cpuprofile to `file` → { profile: 'written', file } (or { profile: 'failed', message }).
 */
const inspector = require('node:inspector');
const { writeFileSync } = require('node:fs');

/** Sampling interval in µs (--cpu-prof's default is 1000): a request takes a few ms, so sample finer. */
const SAMPLING_INTERVAL_US = 250;

function post(session, method, params = {}) {
  return new Promise((resolve, reject) => {
    session.post(method, params, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

if (typeof process.send === 'function') {
  const session = new inspector.Session();
  session.connect();
  const reply = (message) => process.send(message);
  process.on('message', (message) => {
    const step =
      message?.profile === 'start'
        ? post(session, 'Profiler.enable')
            .then(() => post(session, 'Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US }))
            .then(() => post(session, 'Profiler.start'))
            .then(() => reply({ profile: 'started' }))
        : message?.profile === 'stop'
          ? post(session, 'Profiler.stop').then(({ profile }) => {
              writeFileSync(message.file, JSON.stringify(profile));
              reply({ profile: 'written', file: message.file });
            })
          : null;
    step?.catch((err) => reply({ profile: 'failed', message: String(err?.message ?? err) }));
  });
  // The channel must not keep a server alive that was asked to stop.
  setImmediate(() => process.channel?.unref());
}
