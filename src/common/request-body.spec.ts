import type { Request, Response } from 'express';
import { MAX_NESTING } from './limits';
import { isDepthChecked } from './nesting';
import { checkParsedBody, noteRawBody, rawBodyHash } from './request-body';

const SURROGATE =
  'The request body contains an unpaired UTF-16 surrogate (such as \\ud800): text must be valid Unicode.';

/** Runs the raw-bytes note and the parsed-body check on `raw` as body-parser would: the status sent, or 'next'. */
function check(raw: Buffer | string, contentType = 'application/json', path = '/tokens') {
  const bytes = typeof raw === 'string' ? Buffer.from(raw) : raw;
  const req = { headers: { 'content-type': contentType }, path } as unknown as Request;
  noteRawBody(req, {} as Response, bytes);
  const text = /utf-16le/.test(contentType) ? bytes.toString('utf16le') : bytes.toString('utf8');
  req.body = JSON.parse(text) as unknown;
  let sent: { status: number; detail: string } | 'next' = 'next';
  const res = {
    status: (status: number) => ({
      type: () => ({ json: (body: { detail: string }) => (sent = { status, detail: body.detail }) }),
    }),
  } as unknown as Response;
  checkParsedBody(req, res, () => undefined);
  return { sent, body: req.body as unknown };
}

describe('the one pass over a request body', () => {
  it.each([
    ['a value', '{"type":"token","data":"\\ud800"}'],
    ['a low half alone', '{"type":"token","data":"x\\uDC00y"}'],
    ['a member name', '{"\\uD9ff":1}'],
    ['a metadata key', '{"type":"token","data":"x","metadata":{"\\udbff":"v"}}'],
    [
      'an array deep inside',
      `{"data":${'['.repeat(MAX_NESTING - 1)}"\\ud8AB"${']'.repeat(MAX_NESTING - 1)}}`,
    ],
    ['a high half followed by another high half', '{"data":"\\ud800\\ud800\\udc00"}'],
  ])('refuses a lone surrogate escaped in %s', (_label, raw) => {
    expect(check(raw).sent).toEqual({ status: 400, detail: SURROGATE });
  });

  it('refuses a lone surrogate sent raw in a UTF-16 body, where no escape spells it', () => {
    const raw = Buffer.concat([
      Buffer.from('{"data":"', 'utf16le'),
      Buffer.from([0x00, 0xd8]),
      Buffer.from('"}', 'utf16le'),
    ]);
    expect(check(raw, 'application/json; charset=utf-16le').sent).toEqual({ status: 400, detail: SURROGATE });
  });

  it.each([
    ['a pair', '{"data":"\\ud83d\\ude00"}'],
    ['an escaped backslash before u', '{"data":"\\\\ud800"}'],
    ['other escapes', '{"data":"\\u00e9\\u0041\\ue000"}'],
  ])('lets %s through', (_label, raw) => {
    expect(check(raw).sent).toBe('next');
  });

  it('refuses a body nested past the limit, also when its brackets are spread over strings', () => {
    const deep = `${'{"a":'.repeat(MAX_NESTING + 1)}1${'}'.repeat(MAX_NESTING + 1)}`;
    expect(check(deep).sent).toEqual({
      status: 400,
      detail: `The request body is nested deeper than ${MAX_NESTING} levels.`,
    });
    const atLimit = `${'['.repeat(MAX_NESTING)}"${'{'.repeat(100)}"${']'.repeat(MAX_NESTING)}`;
    const { sent, body } = check(atLimit);
    expect(sent).toBe('next');
    expect(isDepthChecked(body)).toBe(true);
  });

  it('leaves the depth of /tokenize bodies to its own walk, and marks them unchecked', () => {
    const deep = `{"a":${'['.repeat(MAX_NESTING + 1)}1${']'.repeat(MAX_NESTING + 1)}}`;
    const { sent, body } = check(deep, 'application/json', '/tokenize');
    expect(sent).toBe('next');
    expect(isDepthChecked(body)).toBe(false);
  });

  it('hashes the raw bytes only on a request with an idempotency key', () => {
    const req = { headers: { 'content-type': 'application/json' } } as unknown as Request;
    noteRawBody(req, {} as Response, Buffer.from('{}'));
    const keyed = { headers: { 'bt-idempotency-key': 'k' } } as unknown as Request;
    noteRawBody(keyed, {} as Response, Buffer.from('{}'));
    expect(rawBodyHash(keyed)).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
    expect(rawBodyHash(req)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});
