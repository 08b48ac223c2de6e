import { Registry } from 'prom-client';
import type { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { loadConfig } from '../config/app-config';
import type { MetricsService } from '../metrics/metrics.service';
import { DedupRateLimit } from './dedup-rate-limit';

function limiter(perMinute: number): { limit: DedupRateLimit; clock: { at: number }; registry: Registry } {
  const clock = { at: 0 };
  const registry = new Registry();
  const config = loadConfig({ NODE_ENV: 'test', DEDUP_WRITES_PER_MINUTE: String(perMinute) });
  const limit = new DedupRateLimit(config, { now: () => new Date(clock.at) }, { registry } as MetricsService);
  return { limit, clock, registry };
}

const app = (applicationId: string): Principal => ({
  tenantId: 't',
  applicationId,
  applicationType: 'public',
  permissions: new Set(),
  rules: [],
});

function refusal(work: () => void): ApiError | null {
  try {
    work();
    return null;
  } catch (err) {
    return err as ApiError;
  }
}

describe('DedupRateLimit', () => {
  it('allows the allowance at once, then refills evenly over a minute', () => {
    const { limit, clock } = limiter(60);
    limit.take(app('a'), 60);
    const refused = refusal(() => limit.take(app('a'), 1));
    expect(refused?.status).toBe(429);
    expect(refused?.headers).toEqual({ 'Retry-After': '1' });
    limit.take(app('b'), 1);
    clock.at += 1_000;
    limit.take(app('a'), 1);
    expect(refusal(() => limit.take(app('a'), 1))?.status).toBe(429);
  });

  it('takes nothing from a refused request and says how long to wait for all of it', () => {
    const { limit, clock } = limiter(60);
    limit.take(app('a'), 58);
    expect(refusal(() => limit.take(app('a'), 5))?.headers).toEqual({ 'Retry-After': '3' });
    clock.at += 3_000;
    limit.take(app('a'), 5);
  });

  it('lets a request larger than the allowance through on a full bucket, leaving it in debt', () => {
    const { limit, clock } = limiter(10);
    limit.take(app('a'), 100);
    clock.at += 60_000;
    expect(refusal(() => limit.take(app('a'), 1))?.status).toBe(429);
  });

  it('is off at 0, and counts outcomes without ids', async () => {
    const { limit, registry } = limiter(0);
    limit.take(app('a'), 1_000_000);
    limit.record('created', 2);
    const text = await registry.metrics();
    expect(text).toContain('token_vault_deduplicating_writes_total{outcome="created"} 2');
    expect(text).not.toContain('applicationId');
  });
});
