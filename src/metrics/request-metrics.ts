import { performance } from 'node:perf_hooks';
import type { RequestContext } from '../common/request-context';
import type { MetricsService } from './metrics.service';

/**
 * Times an answered request; the label is the matched route template (`/tokens/:id`), never the path
 * itself. Scrapes of /metrics are not counted.
 */
export function recordRequest(metrics: MetricsService, { req, res, startedAt }: RequestContext): void {
  if (req.path === '/metrics') {
    return;
  }
  const route = (req.route as { path?: unknown } | undefined)?.path;
  metrics.httpDuration.observe(
    {
      method: req.method,
      route: typeof route === 'string' ? route : '<unmatched>',
      status: String(res.statusCode),
    },
    (performance.now() - startedAt) / 1000,
  );
}
