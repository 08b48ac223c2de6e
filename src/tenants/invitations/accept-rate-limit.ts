import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from '../../common/api-error';
import { TrustedProxies } from '../../common/client-address';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

const WINDOW_MS = 60_000;
const MAX_PER_WINDOW = 20;
const MAX_TRACKED = 100_000;

/**
 * Per-client limit on the public acceptance routes (20 a minute), so invitation secrets cannot be guessed
 * by trying many. The client is the socket's peer, or behind a trusted proxy (TRUST_PROXY) the address
 * X-Forwarded-For names; a spoofed header from anyone else changes nothing. In process: each replica
 * counts its own, which still bounds guessing to a tiny rate.
 */
@Injectable()
export class AcceptRateLimit implements CanActivate {
  private readonly hits = new Map<string, { start: number; count: number }>();
  private readonly proxies: TrustedProxies;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.proxies = new TrustedProxies(config.trustedProxies);
  }

  canActivate(context: ExecutionContext): boolean {
    const client = this.proxies.clientOf(context.switchToHttp().getRequest<Request>());
    const now = Date.now();
    let entry = this.hits.get(client);
    if (entry === undefined || now - entry.start >= WINDOW_MS) {
      if (this.hits.size >= MAX_TRACKED) {
        this.hits.clear();
      }
      entry = { start: now, count: 0 };
      this.hits.set(client, entry);
    }
    entry.count++;
    if (entry.count > MAX_PER_WINDOW) {
      throw ApiError.tooManyRequests('Too many attempts.', (entry.start + WINDOW_MS - now) / 1000);
    }
    return true;
  }
}
