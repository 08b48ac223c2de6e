import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../common/api-error';
import type { KeysetPosition } from './tokens.repository';

/**
 * Opaque cursors of the v2 token lists: the position after the last token of a page, bound to the listing
 * it came from (a digest of its filters) and signed with the tenant's keyed hash. A cursor edited by hand,
 * taken from another listing or issued to another tenant fails verification: a 400, never a wrong page.
 */
export interface CursorSigner {
  sign(payload: string): Promise<string>;
}

interface CursorBody {
  v: 1;
  /** digest of the listing's filters */
  l: string;
  a: string;
  i: string;
}

const MAX_CURSOR = 1000;
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** A short digest of what a listing selects: a cursor only continues the listing it came from. */
export function listingDigest(listing: unknown): string {
  return createHash('sha256').update(JSON.stringify(listing)).digest('base64url').slice(0, 22);
}

export async function encodeCursor(
  signer: CursorSigner,
  listing: string,
  at: KeysetPosition,
): Promise<string> {
  const body: CursorBody = { v: 1, l: listing, a: at.createdAt, i: at.id };
  const payload = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${payload}.${await signer.sign(payload)}`;
}

export async function decodeCursor(
  signer: CursorSigner,
  listing: string,
  cursor: string,
  field: string,
): Promise<KeysetPosition> {
  const invalid = (): ApiError =>
    ApiError.field(field, 'is not a cursor of this listing (use pagination.next as given)');
  const dot = cursor.indexOf('.');
  if (cursor.length > MAX_CURSOR || dot <= 0) {
    throw invalid();
  }
  const payload = cursor.slice(0, dot);
  const given = Buffer.from(cursor.slice(dot + 1), 'utf8');
  const expected = Buffer.from(await signer.sign(payload), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw invalid();
  }
  const body = parseBody(payload);
  if (body === null || body.l !== listing) {
    throw invalid();
  }
  return { createdAt: body.a, id: body.i };
}

function parseBody(payload: string): CursorBody | null {
  try {
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<CursorBody>;
    return body.v === 1 &&
      typeof body.l === 'string' &&
      typeof body.a === 'string' &&
      AT.test(body.a) &&
      typeof body.i === 'string'
      ? (body as CursorBody)
      : null;
  } catch {
    return null;
  }
}
