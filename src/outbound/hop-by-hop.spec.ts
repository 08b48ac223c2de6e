import { stripHopByHop } from './hop-by-hop';

describe('stripHopByHop', () => {
  it('drops hop-by-hop fields and the ones Connection names, and lower-cases the rest', () => {
    expect(
      stripHopByHop({
        Connection: 'keep-alive, X-Secret-Hop',
        'Keep-Alive': 'timeout=5',
        'Proxy-Authorization': 'Basic abc',
        'Proxy-Connection': 'keep-alive',
        'Transfer-Encoding': 'chunked',
        TE: 'trailers',
        Trailer: 'Expires',
        Upgrade: 'h2c',
        'X-Secret-Hop': '1',
        Authorization: 'Bearer kept',
        'Content-Type': 'application/json',
        'Set-Cookie': ['a=1', 'b=2'],
        'Content-Length': 12,
        'X-Undefined': undefined,
      }),
    ).toEqual({
      authorization: 'Bearer kept',
      'content-type': 'application/json',
      'set-cookie': ['a=1', 'b=2'],
      'content-length': 12,
    });
  });

  it('reads a Connection header given as an array', () => {
    expect(stripHopByHop({ connection: ['close', 'x-a'], 'x-a': '1', 'x-b': '2' })).toEqual({ 'x-b': '2' });
  });
});
