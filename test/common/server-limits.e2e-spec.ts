import { createServer, get, Server } from 'node:http';
import { AddressInfo, connect, Socket } from 'node:net';
import { applyServerLimits } from '../../src/common/server-limits';
import { ServerLimitsConfig } from '../../src/config/app-config';
import { TestContext } from '../support/test-app';

/**
 * Sockets held open against a listening vault on 127.0.0.1: the per-address cap, the idle timeout. A
 * second client is 127.0.0.2 as source address (still a connection to 127.0.0.1, never leaving the host).
 */

interface HeldSocket {
  socket: Socket;
  closed: Promise<void>;
  isClosed: () => boolean;
}

function hold(port: number, localAddress = '127.0.0.1'): Promise<HeldSocket> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    const done = new Promise<void>((r) => socket.once('close', () => r()));
    void done.then(() => (closed = true));
    socket.on('error', () => undefined);
    socket.once('connect', () => resolve({ socket, closed: done, isClosed: () => closed }));
    socket.once('error', reject);
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} not within ${ms} ms`)), ms).unref(),
    ),
  ]);
}

function healthFrom(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/health', localAddress, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
  });
}

async function listening(ctx: TestContext): Promise<number> {
  await ctx.vault.app.listen(0, '127.0.0.1');
  return (ctx.vault.app.getHttpServer().address() as AddressInfo).port;
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('HTTP server limits: connections per address', () => {
  const CAP = 6;
  let ctx: TestContext;
  let port: number;
  const held: HeldSocket[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { HTTP_CONNECTIONS_PER_IP: String(CAP) } });
    port = await listening(ctx);
  });
  afterAll(async () => {
    held.forEach((h) => h.socket.destroy());
    await ctx.close();
  });

  it('closes the connections past the cap from one address at once; others still get /health', async () => {
    for (let i = 0; i < CAP; i++) {
      held.push(await hold(port));
    }
    const extra = await Promise.all([hold(port), hold(port), hold(port)]);
    held.push(...extra);
    await within(Promise.all(extra.map((h) => h.closed)), 2000, 'the extra connections closed');
    await pause(100);
    expect(held.slice(0, CAP).filter((h) => h.isClosed())).toEqual([]);
    // Another client is not affected by the first one's sockets.
    expect(await healthFrom(port, '127.0.0.2')).toBe(200);
    // And the first client gets a connection again as soon as one of its own closes.
    held[0].socket.destroy();
    await held[0].closed;
    await pause(50);
    expect(await healthFrom(port, '127.0.0.1')).toBe(200);
  });
});

describe('HTTP server limits: idle sockets', () => {
  let ctx: TestContext;
  let port: number;
  const held: HeldSocket[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create({
      env: { HTTP_IDLE_TIMEOUT_MS: '300', HTTP_KEEPALIVE_MS: '300' },
    });
    port = await listening(ctx);
  });
  afterAll(async () => {
    held.forEach((h) => h.socket.destroy());
    await ctx.close();
  });

  it('closes a socket that sends nothing, and one that stops halfway through its headers', async () => {
    const silent = await hold(port);
    const partial = await hold(port);
    held.push(silent, partial);
    partial.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const started = Date.now();
    await within(Promise.all([silent.closed, partial.closed]), 3000, 'the idle sockets closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(await healthFrom(port, '127.0.0.1')).toBe(200);
  });
});

describe('applyServerLimits on a plain server', () => {
  const limits: ServerLimitsConfig = {
    maxConnections: 100,
    maxConnectionsPerAddress: 100,
    headersTimeoutMs: 1000,
    requestTimeoutMs: 2000,
    keepAliveTimeoutMs: 200,
    idleTimeoutMs: 200,
  };
  let server: Server;

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('does not cut a request the server is still answering after the idle timeout', async () => {
    server = createServer((_req, res) => void setTimeout(() => res.end('late answer'), 700));
    applyServerLimits(server, limits, null);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect([res.status, await res.text()]).toEqual([200, 'late answer']);
  });

  it('lowers the connection cap to what the open-files limit leaves', () => {
    server = createServer();
    expect(applyServerLimits(server, limits, 1024)).toEqual({ maxConnections: 100, lowered: false });
    expect(applyServerLimits(createServer(), { ...limits, maxConnections: 10000 }, 1024)).toEqual({
      maxConnections: 768,
      lowered: true,
    });
    expect(server.maxConnections).toBe(100);
  });
});
