'use strict';
/**
 * The bench's helper servers (the HTTPS echo server, the floor servers) each run in a child process of their
 * own, so that neither autocannon nor the vault shares their event loop and their CPU time can be read like
 * the vault's. A child writes "listening <port>" on stdout once it accepts connections.
 */
const { spawn } = require('node:child_process');
const { profileWindow, profileWindowArgs, profileWindowStdio } = require('./profile-window');

const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts `node <script>` with `env` (plus PATH) and resolves once it listens: { pid, port, cpuSeconds(),
 * unexpectedExit(), stop(), killNow(), profile }. `name` is how errors call it; `args` go before the script
 * (e.g. --cpu-prof); `cleanup` runs once the process is gone. With `profileWindows`, `profile` is
 * { start(), stop(file) } (bench/profile-window.js); otherwise null.
 */
async function startChildProcess({
  name,
  script,
  env,
  args = [],
  cpuSeconds,
  cleanup = () => {},
  profileWindows = false,
}) {
  const child = spawn(process.execPath, [...(profileWindows ? profileWindowArgs() : []), ...args, script], {
    env: { PATH: process.env.PATH, ...env },
    stdio: profileWindows ? profileWindowStdio : ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  child.stderr.on('data', (chunk) => output.push(chunk.toString().trim()));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let stopping = false;
  const running = () => child.exitCode === null && child.signalCode === null;
  const handle = {
    pid: child.pid,
    port: null,
    output,
    cpuSeconds: () => cpuSeconds(child.pid),
    profile: profileWindows ? profileWindow(child) : null,
    unexpectedExit() {
      if (stopping || running()) {
        return null;
      }
      return `the ${name} exited (${child.signalCode ?? `code ${child.exitCode}`}):\n${output.join('\n')}`;
    },
    async stop() {
      stopping = true;
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      cleanup();
    },
    killNow() {
      if (running()) {
        child.kill('SIGKILL');
      }
      cleanup();
    },
  };
  try {
    handle.port = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the ${name} did not start in time`)),
        READY_TIMEOUT_MS,
      );
      let seen = '';
      child.stdout.on('data', (chunk) => {
        seen += chunk.toString();
        const match = /listening (\d+)/.exec(seen);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`the ${name} exited (${signal ?? `code ${code}`}):\n${output.join('\n')}`));
      });
    });
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

module.exports = { startChildProcess };
