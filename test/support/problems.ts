import type { Response } from 'supertest';
import { ApiError } from '../../src/common/api-error';

/** Asserts the common problem-details error body (DESIGN §7) and, when given, the field paths of `errors`. */
export function expectProblem(res: Response, status: number, errorPaths?: string[]): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { status } });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual(
    expect.objectContaining({
      type: expect.any(String),
      title: expect.any(String),
      detail: expect.any(String),
    }),
  );
  if (errorPaths !== undefined) {
    expect(Object.keys(res.body.errors ?? {})).toEqual(expect.arrayContaining(errorPaths));
    for (const path of errorPaths) {
      expect(res.body.errors[path]).toEqual(expect.arrayContaining([expect.any(String)]));
    }
  }
}

/** The status of a service call: 200 when it succeeds, the status of the ApiError it throws, else 500. */
export async function statusOf(work: Promise<unknown>): Promise<number> {
  return work.then(
    () => 200,
    (err: unknown) => (err instanceof ApiError ? err.status : 500),
  );
}
