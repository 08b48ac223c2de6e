import { AddressInfo, createConnection, createServer, Server, Socket } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a local port, for fault tests: `cut` drops every relayed connection
 * (what clients see in a failover), `refuse` makes new connections fail at once until `accept` again, and
 * `blackhole` accepts and then never answers (a network partition: the client waits for its own timeout).
 */
export class TcpRelay {
  private readonly pairs = new Set<Socket>();
  private mode: 'relay' | 'refuse' | 'blackhole' = 'relay';

  private constructor(
    private readonly server: Server,
    private readonly targetPort: number,
  ) {
    server.on('connection', (client) => this.connect(client));
  }

  static async start(targetPort: number): Promise<TcpRelay> {
    const server = createServer();
    const relay = new TcpRelay(server, targetPort);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `url` with its host and port replaced by this relay's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Drops every open connection (both sides), as a failover does. */
  cut(): void {
    for (const socket of this.pairs) {
      socket.destroy();
    }
    this.pairs.clear();
  }

  refuse(): void {
    this.mode = 'refuse';
    this.cut();
  }

  blackhole(): void {
    this.mode = 'blackhole';
    this.cut();
  }

  accept(): void {
    this.mode = 'relay';
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private connect(client: Socket): void {
    this.track(client);
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (this.mode === 'blackhole') {
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort });
    this.track(upstream);
    client.pipe(upstream).pipe(client);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  }

  private track(socket: Socket): void {
    this.pairs.add(socket);
    socket.on('close', () => this.pairs.delete(socket));
  }
}
