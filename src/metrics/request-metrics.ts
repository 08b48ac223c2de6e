import type { NextFunction, Request, Response } from 'express';
import type { MetricsService } from './metrics.service';

/** Times every request; the label is the matched route template (`/tokens/:id`), never the path itself. */
export function requestMetrics(metrics: MetricsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path === '/metrics') {
      next();
      return;
    }
    const end = metrics.httpDuration.startTimer();
    res.once('finish', () => {
      const route = (req.route as { path?: unknown } | undefined)?.path;
      end({
        method: req.method,
        route: typeof route === 'string' ? route : '<unmatched>',
        status: String(res.statusCode),
      });
    });
    next();
  };
}
