import { createHash } from 'node:crypto';
import { MODULE_SOURCES } from '../../src/sandbox/modules';
import { PRELUDE } from '../../src/sandbox/prelude';
import { encodeFrame, FrameReader } from '../../src/sandbox/worker-frames';
import { ivmLocation, startWorkerProcess } from '../../src/sandbox/worker-process';

interface Done {
  id: number;
  ok: boolean;
  isolate?: number;
  body: string;
}

/** One worker process spoken to over its own protocol, so each answer shows which isolate ran the code. */
function worker(): { run: (tenant: string, code: string) => Promise<Done>; close: () => void } {
  const { child, pipe } = startWorkerProcess();
  const waiting = new Map<number, (done: Done) => void>();
  const reader = new FrameReader(
    { headerBytes: 64 * 1024, bodyBytes: 4 * 1024 * 1024 },
    (header, body) => {
      const message = header as Done & { type: string };
      if (message.type === 'done') {
        waiting.get(message.id)?.({ ...message, body: body.toString('utf8') });
      }
    },
    () => child.kill('SIGKILL'),
  );
  pipe.on('data', (chunk: Buffer) => reader.push(chunk));
  pipe.write(
    encodeFrame({
      type: 'init',
      ivmPath: ivmLocation(),
      memoryMb: 64,
      maxResultBytes: 1024 * 1024,
      maxHostBytes: 1024 * 1024,
      prelude: PRELUDE,
      modules: MODULE_SOURCES,
    }),
  );
  let nextId = 1;
  return {
    run: (tenant, code) =>
      new Promise((resolve) => {
        const id = nextId++;
        waiting.set(id, resolve);
        const codeHash = createHash('sha256').update(code).digest('hex');
        const input = JSON.stringify({ req: { args: {}, configuration: {} }, bt: false, fetch: false });
        pipe.write(encodeFrame({ type: 'run', id, tenant, code, codeHash, timeoutMs: 1000 }, input));
      }),
    close: () => child.kill('SIGKILL'),
  };
}

const MARK = `module.exports = async () => {
  const before = typeof globalThis.mark;
  const polluted = [].polluted === true;
  globalThis.mark = 'set';
  Array.prototype.polluted = true;
  return { before, polluted };
};`;

describe('sandbox worker: one isolate per tenant, a fresh context per run', () => {
  let w: ReturnType<typeof worker>;
  beforeAll(() => {
    w = worker();
  });
  afterAll(() => w.close());

  it('runs a tenant again in its own isolate, and another tenant never in it', async () => {
    const a1 = await w.run('tenant-a', MARK);
    const b1 = await w.run('tenant-b', MARK);
    const a2 = await w.run('tenant-a', MARK);
    expect([a1.ok, b1.ok, a2.ok]).toEqual([true, true, true]);
    expect(a2.isolate).toBe(a1.isolate);
    expect(b1.isolate).not.toBe(a1.isolate);
    // The same isolate, yet the second run sees nothing of the first: a fresh context per run.
    for (const done of [a1, b1, a2]) {
      expect(JSON.parse(done.body)).toEqual({ ok: true, value: { before: 'undefined', polluted: false } });
    }
  });

  it('gives a tenant whose isolate was dropped a new one, never a tenant’s it does not own', async () => {
    const seen = new Map<string, number | undefined>();
    // More tenants than a worker keeps isolates for: the first is dropped on the way.
    const tenants = ['t1', 't2', 't3', 't4', 't5'];
    for (const tenant of tenants) {
      seen.set(tenant, (await w.run(tenant, MARK)).isolate);
    }
    expect(new Set(seen.values()).size).toBe(tenants.length);
    const again = await w.run('t1', MARK);
    expect(again.ok).toBe(true);
    expect([...seen.values()]).not.toContain(again.isolate);
    // The most recent tenants still have theirs.
    expect((await w.run('t5', MARK)).isolate).toBe(seen.get('t5'));
  });
});
