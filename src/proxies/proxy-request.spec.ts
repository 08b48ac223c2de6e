import { ApiError } from '../common/api-error';
import {
  destinationUrl,
  forwardedHeaders,
  forwardedPath,
  forwardedQuery,
  headersFromCode,
  returnedHeaders,
} from './proxy-request';

describe('destinationUrl', () => {
  it.each([
    ['https://api.example.com', '', '', 'https://api.example.com'],
    ['https://api.example.com', '/v1/charges', '', 'https://api.example.com/v1/charges'],
    ['https://api.example.com/', '/v1', '?a=1', 'https://api.example.com/v1?a=1'],
    ['https://api.example.com/base/', '/x', '', 'https://api.example.com/base/x'],
    ['https://api.example.com/base?k=1', '/x', '?a=2', 'https://api.example.com/base/x?k=1&a=2'],
    ['https://api.example.com/base?k=1', '', '', 'https://api.example.com/base?k=1'],
    ['https://api.example.com/base#frag', '/x', '', 'https://api.example.com/base/x'],
  ])('%s + %s + %s', (base, path, query, expected) => {
    expect(destinationUrl(base, path, query)).toBe(expected);
  });
});

describe('forwardedPath', () => {
  it('keeps the path after /proxy as written', () => {
    expect(forwardedPath('/proxy')).toBe('');
    expect(forwardedPath('/proxy/v1/a%20b?x=1')).toBe('/v1/a%20b');
  });

  it.each([
    '/proxy/..',
    '/proxy/a/../b',
    '/proxy/%2e%2e/b',
    '/proxy/.%2E/b',
    '/proxy/./b',
    '/proxy/a%2fb',
    '/proxy/%5c',
  ])('refuses %s', (url) => {
    expect(() => forwardedPath(url)).toThrow(ApiError);
  });

  it('refuses malformed percent-encoding with a 400', () => {
    expect(() => forwardedPath('/proxy/%zz')).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('forwardedQuery', () => {
  it('drops bt-proxy-key in any encoding or case and keeps the rest as written', () => {
    expect(forwardedQuery('/proxy?bt-proxy-key=k&a=1&b=%20')).toBe('?a=1&b=%20');
    expect(forwardedQuery('/proxy?BT-Proxy-Key=k')).toBe('');
    expect(forwardedQuery('/proxy?bt%2Dproxy%2Dkey=k&x')).toBe('?x');
    expect(forwardedQuery('/proxy')).toBe('');
  });
});

describe('forwardedHeaders', () => {
  it('drops the vault, hop-by-hop, framing and Connection-named headers', () => {
    expect(
      forwardedHeaders({
        'bt-api-key': 'k',
        'bt-proxy-key': 'p',
        'bt-proxy-url': 'u',
        host: 'vault',
        'content-length': '3',
        connection: 'keep-alive, x-private',
        'x-private': '1',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        authorization: 'Bearer t',
        'x-custom': ['a', 'b'],
      }),
    ).toEqual({ authorization: 'Bearer t', 'x-custom': ['a', 'b'] });
  });
});

describe('returnedHeaders', () => {
  it('keeps raw names, order and repeats, without hop-by-hop fields', () => {
    expect(
      returnedHeaders([
        'Set-Cookie',
        'a',
        'Connection',
        'close, X-Hop',
        'X-Hop',
        '1',
        'Set-Cookie',
        'b',
        'ETag',
        'e',
      ]),
    ).toEqual([
      ['Set-Cookie', 'a'],
      ['Set-Cookie', 'b'],
      ['ETag', 'e'],
    ]);
  });
});

describe('the Connection header', () => {
  it('names fields to strip when it names more than one hop-by-hop field, over several lines too', () => {
    expect(
      returnedHeaders(['Connection', 'keep-alive', 'X-Hop', '1', 'Connection', 'X-Hop', 'ETag', 'e']),
    ).toEqual([['ETag', 'e']]);
    expect(forwardedHeaders({ connection: 'close', close: 'x', 'x-kept': '1' })).toEqual({ 'x-kept': '1' });
  });

  it('names nothing more when it is only keep-alive, in any case', () => {
    expect(returnedHeaders(['Connection', 'Keep-Alive', 'Keep-Alive', 'timeout=5', 'ETag', 'e'])).toEqual([
      ['ETag', 'e'],
    ]);
    expect(forwardedHeaders({ connection: 'keep-alive', 'x-kept': '1' })).toEqual({ 'x-kept': '1' });
  });
});

describe('headersFromCode', () => {
  it('keeps valid names and scalar values, lower-cased, and drops the rest', () => {
    expect(
      headersFromCode({
        'X-Ok': 'v',
        'x-num': 5,
        'x-list': ['a', 1],
        'bt-api-key': 'k',
        'Content-Length': '9',
        connection: 'close',
        'bad name': 'v',
        'x-split': 'a\r\nInjected: 1',
        'x-object': { a: 1 },
      }),
    ).toEqual({ 'x-ok': 'v', 'x-num': '5', 'x-list': ['a', '1'] });
  });

  it('refuses a value that is not an object', () => {
    expect(() => headersFromCode('nope')).toThrow(ApiError);
    expect(() => headersFromCode([])).toThrow(ApiError);
  });
});
