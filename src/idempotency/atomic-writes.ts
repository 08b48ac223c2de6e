import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable, Subscription } from 'rxjs';
import { errorHeaders } from '../common/database-unavailable';
import { toProblem } from '../common/to-problem';
import { Database } from '../database/database.service';
import { CapturedResponse, captureResponse, EndArguments } from './captured-response';
import { crashPoint } from './crash-points';
import { Idempotency, IdempotencyScope } from './idempotency.service';
import { Begun, IdempotencyStore } from './idempotency.store';

/** What a keyed request sends: the key, whose key space it is in, and its body's hash. */
export interface KeyedRequest {
  key: string;
  who: IdempotencyScope;
  bodyHash: string;
}

/**
 * BT-IDEMPOTENCY-KEY on a write whose work can roll back (every keyed Nest write route but a reaction): the
 * claim, the work and its answer commit in one transaction (Database.runWhole), so a crash leaves all
 * of them or none. A retry meanwhile waits on the claim's unique key until that commit and then gets the
 * kept answer, or runs the work if the first attempt failed or died (its transaction rolled back when its
 * connection dropped): never both, and no claim outlives its request. The answer is the response as Nest
 * writes it, kept and committed before its last byte goes out; if the commit fails, the caller gets that
 * error instead. A failed request (status 400 and above) keeps its other writes, as without a key, and
 * drops its claim. `rerun` (a read that discloses token data) keeps only that it succeeded.
 */
@Injectable()
export class AtomicWrites {
  constructor(
    private readonly idempotency: Idempotency,
    private readonly store: IdempotencyStore,
    private readonly db: Database,
  ) {}

  run(
    req: Request,
    res: Response,
    keyed: KeyedRequest,
    rerun: boolean,
    work: () => Observable<unknown>,
  ): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      let handling: Subscription | undefined;
      const answered = deferred<CapturedResponse | null>();
      // Settles once the transaction has ended: with the error its commit failed with, if it did.
      const ended = deferred<unknown>();
      let failed = false;
      // Sent in the round trip of the BEGIN: it waits there for a concurrent request with the same key.
      const opening = this.idempotency.openingClaim(req, keyed.key, keyed.who, keyed.bodyHash);
      const attempt = async (opened: object[]): Promise<Begun | null> => {
        const begun = await opening.begun(opened);
        if (begun.kind === 'replay') {
          return begun;
        }
        captureResponse(res, async (captured) => {
          answered.resolve(captured);
          const failure = await ended.promise;
          return failure === undefined ? undefined : failedAnswer(res, failure);
        });
        await crashPoint('claimed');
        // Subscribed here, so the handler runs inside the transaction (Nest binds it to this context).
        handling = work().subscribe(subscriber);
        const captured = await answered.promise;
        await crashPoint('worked');
        if (res.statusCode >= 400) {
          failed = true;
          this.store.abandonAtCommit(begun.ticket);
          return null;
        }
        // The answer goes in the round trip of the COMMIT.
        await this.store.completeAtCommit(begun.ticket, rerun ? null : captured);
        await crashPoint('answered');
        return null;
      };
      this.db.runWhole(attempt, opening.statement).then(
        async (found) => {
          if (found === null || found.kind !== 'replay') {
            this.idempotency.count(failed ? 'failed' : 'stored');
            await crashPoint('committed');
            ended.resolve(undefined);
            return;
          }
          try {
            if (this.idempotency.replayOrRun(req, res, found.response, rerun ? 'rerun' : undefined)) {
              handling = work().subscribe(subscriber);
            } else {
              subscriber.next(undefined);
              subscriber.complete();
            }
          } catch (err) {
            subscriber.error(err);
          }
        },
        (err: unknown) => {
          if (handling === undefined) {
            subscriber.error(err);
          } else {
            // A failed request's answer stands: its rollback dropped the claim all the same.
            ended.resolve(failed ? undefined : (err ?? new Error('the transaction failed')));
          }
        },
      );
      return () => handling?.unsubscribe();
    });
  }
}

/** The error answer that replaces a success whose transaction did not commit (before any byte went out). */
function failedAnswer(res: Response, err: unknown): EndArguments | undefined {
  if (res.headersSent) {
    return undefined;
  }
  const body = toProblem(err);
  for (const name of ['content-length', 'content-type', 'etag', 'location', 'last-modified']) {
    res.removeHeader(name);
  }
  res.set(errorHeaders(err));
  res.status(body.status).type('application/problem+json');
  return [JSON.stringify(body)];
}

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
