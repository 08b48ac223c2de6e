import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { applyServerLimits } from '../common/server-limits';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { carriesMetricsToken } from './metrics-access';
import { MetricsService } from './metrics.service';

/**
 * With METRICS_PORT set, /metrics is served there alone, on METRICS_HOST (loopback unless set): a port only
 * the operator's scraper reaches. With METRICS_TOKEN set it also needs `Authorization: Bearer <token>`.
 * Tenant keys mean nothing here.
 */
@Injectable()
export class MetricsPort implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private server: Server | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: MetricsService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === null) {
      return;
    }
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      if (
        this.config.metricsToken !== null &&
        !carriesMetricsToken(req.headers.authorization, this.config.metricsToken)
      ) {
        res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end();
        return;
      }
      this.metrics.text().then(
        (text) =>
          res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    applyServerLimits(server, this.config.server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort ?? 0, this.config.metricsHost, () => resolve());
    });
    this.server = server;
    this.logger.log(
      { host: this.config.metricsHost, port: this.address() },
      'metrics served on their own port',
    );
  }

  /** The bound port (METRICS_PORT=0 picks one). */
  address(): number | null {
    const address = this.server?.address();
    return typeof address === 'object' && address !== null ? address.port : null;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server !== null) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }
}
