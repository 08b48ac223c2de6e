import type { Response } from 'express';
import { Registry } from 'prom-client';
import type { MetricsService } from '../metrics/metrics.service';
import { PendingReplay } from './discloses';
import { Idempotency } from './idempotency.service';
import type { IdempotencyStore } from './idempotency.store';

/** A kept react answer (it names a card number) is sent only once the route has checked it under today's rules. */
describe('PendingReplay', () => {
  const idempotency = new Idempotency(
    {} as IdempotencyStore,
    {
      registry: new Registry(),
    } as unknown as MetricsService,
  );
  const answer = {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"raw":"4242424242424242"}').toString('base64'),
  };
  const response = () => {
    const res = { status: jest.fn(), setHeader: jest.fn(), end: jest.fn() };
    return { res, sent: res as unknown as Response };
  };

  it('is never sent when the route did not check it (a route that ignores its replay fails, loudly)', () => {
    const { res, sent } = response();
    expect(() => idempotency.replayChecked(sent, new PendingReplay(answer))).toThrow(
      /without the route checking/,
    );
    expect(res.end).not.toHaveBeenCalled();
  });

  it('is sent as kept, marked replayed, once checked', () => {
    const { res, sent } = response();
    const pending = new PendingReplay(answer);
    expect(pending.checked()).toEqual({ replayChecked: true });
    idempotency.replayChecked(sent, pending);
    expect(res.status).toHaveBeenCalledWith(200);
    expect(res.setHeader).toHaveBeenCalledWith('Idempotent-Replayed', 'true');
    expect(res.end).toHaveBeenCalledWith(Buffer.from(answer.body, 'base64'));
  });
});
