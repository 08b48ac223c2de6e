import { forbiddenConnector, recordingConnector, staticResolver } from '../../test/support/outbound';
import {
  createSystemResolver,
  DestinationGuard,
  OutboundConnector,
  OutboundResolver,
} from './destination-guard';
import { OutboundError } from './outbound.errors';

function guardWith(
  resolver: OutboundResolver,
  connector: OutboundConnector,
  allowLoopback = false,
): DestinationGuard {
  return new DestinationGuard({ resolver, connector, allowLoopback, connectTimeoutMs: 1000 });
}

async function failureOf(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundError);
    return err as OutboundError;
  }
  throw new Error('expected a rejection');
}

// Names resolving to addresses no test may ever connect to: judged here, at the decision point, only.
// Every one reads exactly like a name that does not resolve: the answer names neither range nor address.
const REFUSED_ANSWERS: [string, string[]][] = [
  ['loopback', ['127.0.0.1']],
  ['loopback elsewhere in 127/8', ['127.53.0.1']],
  ['IPv6 loopback', ['::1']],
  ['unspecified', ['0.0.0.0']],
  ['IPv6 unspecified', ['::']],
  ['private 10/8', ['10.0.0.1']],
  ['private 172.16/12', ['172.16.5.4']],
  ['private 192.168/16', ['192.168.1.1']],
  ['CGNAT 100.64/10', ['100.64.0.1']],
  ['link-local', ['169.254.1.1']],
  ['AWS/GCP/Azure metadata', ['169.254.169.254']],
  ['AWS ECS credentials', ['169.254.170.2']],
  ['Alibaba metadata', ['100.100.100.200']],
  ['AWS IPv6 metadata', ['fd00:ec2::254']],
  ['IPv6 unique local', ['fd12:3456::1']],
  ['IPv6 link-local', ['fe80::1']],
  ['IPv6 scoped link-local', ['fe80::1%eth0']],
  ['IPv6 site-local', ['fec0::1']],
  ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
  ['IPv4-mapped private', ['::ffff:10.0.0.1']],
  ['IPv4-mapped metadata (hex)', ['::ffff:a9fe:a9fe']],
  ['IPv4-compatible loopback', ['::127.0.0.1']],
  ['NAT64 private', ['64:ff9b::192.168.0.1']],
  ['6to4 private', ['2002:c0a8:1::1']],
  ['Teredo', ['2001:0:808:808::f5ff:fffe']],
  ['multicast', ['224.0.0.1']],
  ['IPv6 multicast', ['ff02::1']],
  ['broadcast', ['255.255.255.255']],
  ['reserved 240/4', ['240.0.0.1']],
  ['documentation', ['192.0.2.10']],
  ['IPv6 documentation', ['2001:db8::1']],
  ['benchmarking', ['198.18.0.1']],
  ['not an address', ['not-an-ip']],
  ['public then private (rebinding answer)', ['93.184.216.34', '10.0.0.1']],
  ['private then public', ['192.168.0.10', '93.184.216.34']],
  ['public IPv6 and mapped loopback', ['2606:4700::1', '::ffff:127.0.0.1']],
];

describe('DestinationGuard decision point', () => {
  it.each(REFUSED_ANSWERS)('refuses a name resolving to %s, before any connection', async (_, answer) => {
    const resolver = staticResolver({ 'api.example.com': answer });
    const connector = forbiddenConnector();
    const err = await failureOf(guardWith(resolver, connector).connect('api.example.com', 443));
    expect(err.failure).toBe('destination_refused');
    expect(err.status).toBe(400);
    expect(err.detail).toBe(
      'The destination is not allowed: its host name does not resolve to a public address.',
    );
    expect(resolver).toHaveBeenCalledWith('api.example.com');
    expect(connector).not.toHaveBeenCalled();
  });

  it.each([
    ['0.0.0.0', ['0.0.0.0']],
    ['10.0.0.1', ['10.0.0.1']],
    ['169.254.169.254', ['169.254.169.254']],
    ['::ffff:192.168.0.1', ['::ffff:192.168.0.1']],
    ['loopback mixed with private', ['127.0.0.1', '10.0.0.1']],
  ])('with loopback allowed, still refuses %s', async (_, answer) => {
    const connector = forbiddenConnector();
    const guard = guardWith(staticResolver({ 'api.example.com': answer }), connector, true);
    expect((await failureOf(guard.connect('api.example.com', 443))).failure).toBe('destination_refused');
    expect(connector).not.toHaveBeenCalled();
  });

  it('with loopback allowed, connects to the loopback address it checked', async () => {
    const connector = recordingConnector();
    const guard = guardWith(staticResolver({ 'vault-proxy.test': ['127.0.0.1'] }), connector, true);
    await failureOf(guard.connect('vault-proxy.test', 8443));
    expect(connector.mock.calls).toEqual([
      [{ address: '127.0.0.1', family: 4, port: 8443, servername: 'vault-proxy.test', timeoutMs: 1000 }],
    ]);
  });

  it('connects to the exact checked public address with the host name as SNI', async () => {
    const connector = recordingConnector();
    const guard = guardWith(staticResolver({ 'api.example.com': ['93.184.216.34'] }), connector);
    const err = await failureOf(guard.connect('API.example.com.', 443));
    expect(err.failure).toBe('connection_failed');
    expect(err.status).toBe(502);
    expect(connector).toHaveBeenCalledTimes(1);
    expect(connector).toHaveBeenCalledWith({
      address: '93.184.216.34',
      family: 4,
      port: 443,
      servername: 'api.example.com',
      timeoutMs: 1000,
    });
  });

  it('tries each checked address in order when connections are refused, once each', async () => {
    const connector = recordingConnector();
    const guard = guardWith(
      staticResolver({ 'api.example.com': ['2606:4700::1', '93.184.216.34', '93.184.216.34'] }),
      connector,
    );
    await failureOf(guard.connect('api.example.com', 443));
    expect(connector.mock.calls.map(([target]) => [target.address, target.family])).toEqual([
      ['2606:4700::1', 6],
      ['93.184.216.34', 4],
    ]);
  });

  it('does not try another address after a TLS failure', async () => {
    const connector = jest.fn<ReturnType<OutboundConnector>, Parameters<OutboundConnector>>(() =>
      Promise.reject(Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' })),
    );
    const guard = guardWith(
      staticResolver({ 'api.example.com': ['93.184.216.34', '93.184.216.35'] }),
      connector,
    );
    const err = await failureOf(guard.connect('api.example.com', 443));
    expect(err.failure).toBe('tls_failure');
    expect(err.detail).toBe('The destination certificate is expired or not yet valid.');
    expect(connector).toHaveBeenCalledTimes(1);
  });

  it('resolves again for every connection, so a changed answer is checked again', async () => {
    const answers = [['93.184.216.34'], ['169.254.169.254']];
    const resolver = jest.fn(() =>
      Promise.resolve((answers.shift() ?? []).map((address) => ({ address, family: 4 as const }))),
    );
    const connector = recordingConnector();
    const guard = guardWith(resolver, connector);
    expect((await failureOf(guard.connect('api.example.com', 443))).failure).toBe('connection_failed');
    expect((await failureOf(guard.connect('api.example.com', 443))).failure).toBe('destination_refused');
    expect(resolver).toHaveBeenCalledTimes(2);
    expect(connector).toHaveBeenCalledTimes(1);
  });

  it.each(['localhost', 'LOCALHOST.'])(
    'refuses the host %s without resolving it, loopback refused',
    async (host) => {
      const resolver = staticResolver({ localhost: '127.0.0.1' });
      const connector = forbiddenConnector();
      const err = await failureOf(guardWith(resolver, connector).connect(host, 443));
      expect(err.failure).toBe('destination_refused');
      expect(resolver).not.toHaveBeenCalled();
    },
  );

  it('resolves localhost with loopback allowed and connects to loopback only', async () => {
    const connector = recordingConnector();
    const guard = guardWith(staticResolver({ localhost: '127.0.0.1' }), connector, true);
    expect((await failureOf(guard.connect('localhost', 8443))).failure).toBe('connection_failed');
    expect(connector).toHaveBeenCalledWith(expect.objectContaining({ address: '127.0.0.1', port: 8443 }));
    const elsewhere = guardWith(staticResolver({ localhost: '10.0.0.1' }), forbiddenConnector(), true);
    expect((await failureOf(elsewhere.connect('localhost', 443))).failure).toBe('destination_refused');
  });

  it.each(['api.localhost', '127.0.0.1', '::1', 'metadata', 'db.internal', '0x7f.1'])(
    'refuses the host %s without resolving it',
    async (host) => {
      const resolver = staticResolver({});
      const connector = forbiddenConnector();
      const err = await failureOf(guardWith(resolver, connector, true).connect(host, 443));
      expect(err.failure).toBe('destination_refused');
      expect(resolver).not.toHaveBeenCalled();
      expect(connector).not.toHaveBeenCalled();
    },
  );

  it('answers a name that does not resolve, an empty answer and a private answer alike (no DNS oracle)', async () => {
    const connector = forbiddenConnector();
    const resolver = staticResolver({ 'ten.example.com': '10.0.0.1', 'empty.example.com': [] });
    const failing = jest.fn<ReturnType<OutboundResolver>, Parameters<OutboundResolver>>(() =>
      Promise.reject(Object.assign(new Error('resolver down'), { code: 'ESERVFAIL' })),
    );
    const seen = await Promise.all(
      [
        guardWith(resolver, connector).connect('ten.example.com', 443),
        guardWith(resolver, connector).connect('nowhere.example.com', 443),
        guardWith(resolver, connector).connect('empty.example.com', 443),
        guardWith(failing, connector).connect('api.example.com', 443),
        guardWith(staticResolver({ 'lo.example.com': '127.0.0.1' }), connector).connect(
          'lo.example.com',
          443,
        ),
      ].map(async (attempt) => {
        const err = await failureOf(attempt);
        return JSON.stringify([err.failure, err.status, err.detail, err.errors]);
      }),
    );
    expect(new Set(seen)).toEqual(
      new Set([
        JSON.stringify([
          'destination_refused',
          400,
          'The destination is not allowed: its host name does not resolve to a public address.',
          undefined,
        ]),
      ]),
    );
    expect(connector).not.toHaveBeenCalled();
  });

  it('keeps the resolver error code for the log only', async () => {
    const err = await failureOf(
      guardWith(staticResolver({}), forbiddenConnector()).connect('x.example.com', 443),
    );
    expect([err.code, err.detail, err.logReason]).toEqual([
      'ENOTFOUND',
      'The destination is not allowed: its host name does not resolve to a public address.',
      'the host name does not resolve (ENOTFOUND)',
    ]);
  });

  it('tells the log a name that does not resolve from one resolving to a refused address', async () => {
    const resolver = staticResolver({ 'ten.example.com': '10.0.0.1', 'empty.example.com': [] });
    const reasons = await Promise.all(
      ['nowhere.example.com', 'empty.example.com', 'ten.example.com'].map(
        async (name) =>
          (await failureOf(guardWith(resolver, forbiddenConnector()).connect(name, 443))).logReason,
      ),
    );
    expect(reasons).toEqual([
      'the host name does not resolve (ENOTFOUND)',
      'the host name does not resolve',
      'the host name resolves to a refused address (private)',
    ]);
  });

  it('resolve() returns the checked addresses without connecting', async () => {
    const connector = forbiddenConnector();
    const guard = guardWith(
      staticResolver({ 'api.example.com': ['93.184.216.34', '2606:4700::1'] }),
      connector,
    );
    await expect(guard.resolve('api.example.com')).resolves.toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1', family: 6 },
    ]);
    expect(connector).not.toHaveBeenCalled();
  });
});

describe('createSystemResolver', () => {
  it('asks for the absolute name (no search domains) and every address, in the order given', async () => {
    const lookup = jest.fn(() =>
      Promise.resolve([
        { address: '2606:4700::1', family: 6 },
        { address: '93.184.216.34', family: 4 },
      ]),
    );
    await expect(createSystemResolver(lookup)('api.example.com')).resolves.toEqual([
      { address: '2606:4700::1', family: 6 },
      { address: '93.184.216.34', family: 4 },
    ]);
    expect(lookup).toHaveBeenCalledWith('api.example.com.', { all: true, order: 'verbatim' });
  });
});
