'use strict';
/**
 * BENCH_PROFILE: a CPU profile of the server a scenario measures, over that scenario's measured window only
 * (not start-up, set-up or warm-up). Servers started with profileWindowArgs() preload bench/profile-hook.js
 * and get an IPC channel; profileWindow(child) is the bench's side of it. Print a profile's top self-time
 * functions and files with `node bench/profile-summary.js <file>`.
 */
const { join } = require('node:path');

const HOOK = join(__dirname, 'profile-hook.js');
const REPLY_TIMEOUT_MS = 30_000;

/** The node arguments that preload the hook. */
const profileWindowArgs = () => ['--require', HOOK];

/** The stdio of a child that can be profiled: stdout and stderr piped, plus the IPC channel. */
const profileWindowStdio = ['ignore', 'pipe', 'pipe', 'ipc'];

/** { start(), stop(file) } for a child spawned with profileWindowArgs() and profileWindowStdio. */
function profileWindow(child) {
  const request = (message, expected) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.off('message', onMessage);
        reject(new Error(`no answer to profile ${message.profile} in ${REPLY_TIMEOUT_MS / 1000} s`));
      }, REPLY_TIMEOUT_MS);
      const onMessage = (reply) => {
        if (reply?.profile !== expected && reply?.profile !== 'failed') {
          return;
        }
        clearTimeout(timer);
        child.off('message', onMessage);
        if (reply.profile === 'failed') {
          reject(new Error(`profile ${message.profile} failed: ${reply.message}`));
        } else {
          resolve(reply);
        }
      };
      child.on('message', onMessage);
      child.send(message);
    });
  return {
    start: () => request({ profile: 'start' }, 'started').then(() => undefined),
    stop: (file) => request({ profile: 'stop', file }, 'written').then(() => file),
  };
}

/**
 * Which scenarios BENCH_PROFILE profiles: null (unset or empty: none), every one ("1"), or those whose name
 * contains the text given.
 */
function profileSelection(raw) {
  const value = raw?.trim() ?? '';
  if (value === '' || value === '0') {
    return null;
  }
  return value === '1' ? () => true : (name) => name.includes(value);
}

/** A file name for a scenario's profile: its name in lower-case words joined by '-'. */
function profileFileName(scenarioName) {
  const slug = scenarioName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 120);
  return `${slug}.cpuprofile`;
}

module.exports = { profileFileName, profileSelection, profileWindow, profileWindowArgs, profileWindowStdio };
