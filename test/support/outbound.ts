import { isIP } from 'node:net';
import type { ConnectTarget, OutboundConnector, OutboundResolver } from '../../src/outbound';

/**
 * Outbound test seams. Tests never do a real DNS lookup: they resolve names with staticResolver. Only
 * 127.0.0.1 / ::1 may ever be connected to; every other address is tested at the guard's decision point
 * with forbiddenConnector (refusal expected) or recordingConnector (records, never connects).
 */

/** The host name tests use for their HTTPS server on 127.0.0.1 (with PROXY_ALLOW_LOOPBACK=true). */
export const TEST_HOST = 'vault-proxy.test';

/** A resolver answering from a fixed map; any other name fails like a name that does not exist. */
export function staticResolver(
  names: Record<string, string | string[]>,
): jest.Mock<ReturnType<OutboundResolver>, Parameters<OutboundResolver>> {
  return jest.fn((hostname: string) => {
    const answer = names[hostname];
    if (answer === undefined) {
      return Promise.reject(Object.assign(new Error('test resolver: unknown name'), { code: 'ENOTFOUND' }));
    }
    return Promise.resolve(
      [answer]
        .flat()
        .map((address) => ({ address, family: isIP(address) === 6 ? (6 as const) : (4 as const) })),
    );
  });
}

/** A connector for tests where the guard must refuse: assert `not.toHaveBeenCalled()`; if called, it fails. */
export function forbiddenConnector(): jest.Mock<
  ReturnType<OutboundConnector>,
  Parameters<OutboundConnector>
> {
  return jest.fn((target: ConnectTarget) =>
    Promise.reject(new Error(`the guard let a connection to ${target.address} through`)),
  );
}

/** Records each connection the guard allows and fails it like a closed port, without opening anything. */
export function recordingConnector(): jest.Mock<
  ReturnType<OutboundConnector>,
  Parameters<OutboundConnector>
> {
  return jest.fn((_target: ConnectTarget) =>
    Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
  );
}
