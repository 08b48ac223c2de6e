import { formatTraceparent, parseTraceparent } from './traceparent';

describe('traceparent', () => {
  const ids = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };

  it('formats a span’s ids as version 00 and reads them back', () => {
    const header = formatTraceparent(ids);
    expect(header).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    expect(parseTraceparent(header)).toEqual(ids);
    expect(formatTraceparent({ ...ids, traceFlags: 0 })).toMatch(/-00$/);
  });

  it.each([
    '',
    '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nbaggage: a=b',
  ])('refuses %j', (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});
