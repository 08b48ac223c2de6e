import { Test } from '@nestjs/testing';
import { forbiddenConnector, recordingConnector, staticResolver } from '../../test/support/outbound';
import { loadConfig } from '../config/app-config';
import { ConfigModule } from '../config/config.module';
import type { OutboundConnector, OutboundResolver } from './destination-guard';
import { OutboundClient } from './outbound-client';
import { OutboundError } from './outbound.errors';
import { OutboundModule } from './outbound.module';
import { OUTBOUND_CONNECTOR, OUTBOUND_RESOLVER } from './outbound.tokens';

function clientWith(
  resolver: OutboundResolver,
  connector: OutboundConnector,
  env: Record<string, string> = {},
): OutboundClient {
  return new OutboundClient(loadConfig({ NODE_ENV: 'test', ...env }), resolver, connector);
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

const clients: OutboundClient[] = [];
afterEach(() => {
  clients.splice(0).forEach((client) => client.close());
});
function track(client: OutboundClient): OutboundClient {
  clients.push(client);
  return client;
}

describe('OutboundClient at the decision point (no socket is ever opened)', () => {
  it.each([
    'http://api.example.com/',
    'https://127.0.0.1/',
    'https://2130706433/',
    'https://0x7f.1/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00:ec2::254]/',
    'https://10.0.0.1/',
    'https://api.localhost/',
    'https://a@127.0.0.1/',
    'https://a@api.example.com/',
    'https://metadata.google.internal/',
  ])('refuses %s before resolving anything, even with loopback allowed', async (url) => {
    const resolver = staticResolver({});
    const connector = forbiddenConnector();
    const client = track(clientWith(resolver, connector, { PROXY_ALLOW_LOOPBACK: 'true' }));
    const err = await failureOf(client.request({ method: 'GET', url }));
    expect([err.failure, err.status]).toEqual(['destination_refused', 400]);
    expect(err.detail).toMatch(/^The destination is not allowed: /);
    expect(resolver).not.toHaveBeenCalled();
    expect(connector).not.toHaveBeenCalled();
  });

  it.each([
    ['10.1.2.3'],
    ['172.16.0.1'],
    ['192.168.0.1'],
    ['100.64.0.1'],
    ['169.254.169.254'],
    ['127.0.0.1'],
    ['fd00::1'],
    ['fe80::1'],
    ['::ffff:10.0.0.1'],
    ['93.184.216.34', '10.0.0.1'],
  ])('refuses a name resolving to %s, and never calls the connector', async (...answer) => {
    const connector = forbiddenConnector();
    const client = track(clientWith(staticResolver({ 'pay.example.com': answer }), connector));
    const body = Buffer.from('{"number":"4242424242424242"}');
    const err = await failureOf(
      client.request({ method: 'POST', url: 'https://pay.example.com/charge', body }),
    );
    expect([err.failure, err.status]).toEqual(['destination_refused', 400]);
    expect(err.detail).not.toContain('4242');
    expect(connector).not.toHaveBeenCalled();
  });

  it('calls the connector with the checked public address, the port and the host name as SNI', async () => {
    const connector = recordingConnector();
    const client = track(clientWith(staticResolver({ 'pay.example.com': ['93.184.216.34'] }), connector));
    const err = await failureOf(client.request({ method: 'GET', url: 'https://Pay.Example.com:8443/x?y=1' }));
    expect([err.failure, err.status]).toEqual(['connection_failed', 502]);
    expect(connector).toHaveBeenCalledTimes(1);
    expect(connector.mock.calls[0][0]).toEqual(
      expect.objectContaining({ address: '93.184.216.34', port: 8443, servername: 'pay.example.com' }),
    );
  });

  it('checks every new connection again: a changed DNS answer is refused', async () => {
    const answers: Record<string, string[]> = { 'pay.example.com': ['93.184.216.34'] };
    const resolver = jest.fn((name: string) =>
      Promise.resolve((answers[name] ?? []).map((address) => ({ address, family: 4 as const }))),
    );
    const connector = recordingConnector();
    const client = track(clientWith(resolver, connector));
    const url = 'https://pay.example.com/';
    expect((await failureOf(client.request({ method: 'GET', url }))).failure).toBe('connection_failed');
    answers['pay.example.com'] = ['10.0.0.5'];
    expect((await failureOf(client.request({ method: 'GET', url }))).failure).toBe('destination_refused');
    expect(connector).toHaveBeenCalledTimes(1);
  });

  it('answers 408 when the connection does not come within PROXY_TIMEOUT_MS', async () => {
    const connector = jest.fn<ReturnType<OutboundConnector>, Parameters<OutboundConnector>>(
      () => new Promise(() => undefined),
    );
    const client = track(
      clientWith(staticResolver({ 'pay.example.com': ['93.184.216.34'] }), connector, {
        PROXY_TIMEOUT_MS: '150',
      }),
    );
    const started = Date.now();
    const err = await failureOf(client.request({ method: 'GET', url: 'https://pay.example.com/' }));
    expect([err.failure, err.status]).toEqual(['timeout', 408]);
    expect(err.detail).toBe('The destination did not answer within 150 ms.');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('answers 408 when the resolver hangs', async () => {
    const connector = forbiddenConnector();
    const client = track(
      clientWith(() => new Promise(() => undefined), connector, { PROXY_TIMEOUT_MS: '100' }),
    );
    const err = await failureOf(
      client.request({ method: 'GET', url: 'https://pay.example.com/', timeoutMs: 5000 }),
    );
    expect(err.failure).toBe('timeout');
    expect(connector).not.toHaveBeenCalled();
  });

  it('refuses unsupported methods and invalid headers without quoting them', async () => {
    const connector = forbiddenConnector();
    const client = track(clientWith(staticResolver({ 'pay.example.com': ['93.184.216.34'] }), connector));
    const url = 'https://pay.example.com/';
    for (const method of ['CONNECT', 'TRACE', 'FOO']) {
      expect((await failureOf(client.request({ method, url }))).failure).toBe('invalid_request');
    }
    const err = await failureOf(
      client.request({ method: 'GET', url, headers: { 'x-card': '4242\r\nx: y' } }),
    );
    expect([err.failure, err.status]).toEqual(['invalid_request', 400]);
    expect(err.detail).not.toContain('4242');
    expect(connector).not.toHaveBeenCalled();
  });

  it('does not start when the signal is already aborted', async () => {
    const connector = forbiddenConnector();
    const client = track(clientWith(staticResolver({ 'pay.example.com': ['93.184.216.34'] }), connector));
    const err = await failureOf(
      client.request({ method: 'GET', url: 'https://pay.example.com/', signal: AbortSignal.abort() }),
    );
    expect([err.failure, err.status]).toEqual(['aborted', 499]);
  });
});

describe('OutboundModule', () => {
  it('wires the overrides given to forRoot', async () => {
    const resolver = staticResolver({});
    const connector = forbiddenConnector();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot(loadConfig({ NODE_ENV: 'test' })),
        OutboundModule.forRoot({ resolver, connector }),
      ],
    }).compile();
    const err = await failureOf(
      moduleRef.get(OutboundClient).request({ method: 'GET', url: 'https://a.example/' }),
    );
    expect([err.failure, err.detail]).toEqual([
      'destination_refused',
      'The destination is not allowed: its host name does not resolve to a public address.',
    ]);
    expect(resolver).toHaveBeenCalledWith('a.example');
    await moduleRef.close();
  });

  it('lets a testing module replace the resolver and connector by token', async () => {
    const resolver = staticResolver({ 'a.example': ['192.168.1.1'] });
    const connector = forbiddenConnector();
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot(loadConfig({ NODE_ENV: 'test' })), OutboundModule.forRoot()],
    })
      .overrideProvider(OUTBOUND_RESOLVER)
      .useValue(resolver)
      .overrideProvider(OUTBOUND_CONNECTOR)
      .useValue(connector)
      .compile();
    const err = await failureOf(
      moduleRef.get(OutboundClient).request({ method: 'GET', url: 'https://a.example/' }),
    );
    expect(err.failure).toBe('destination_refused');
    expect(connector).not.toHaveBeenCalled();
    await moduleRef.close();
  });

  it('refuses to boot when PROXY_CA_FILE cannot be read', async () => {
    const config = loadConfig({ NODE_ENV: 'test', PROXY_CA_FILE: '/nonexistent/ca.pem' });
    await expect(
      Test.createTestingModule({
        imports: [ConfigModule.forRoot(config), OutboundModule.forRoot()],
      }).compile(),
    ).rejects.toThrow('PROXY_CA_FILE could not be read');
  });
});
