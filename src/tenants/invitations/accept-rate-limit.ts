import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../../common/api-error';

const WINDOW_MS = 60_000;
const MAX_PER_WINDOW = 20;
const MAX_TRACKED = 100_000;

/**
 * Per-IP limit on the public acceptance routes (20 a minute), so invitation secrets cannot be guessed by
 * trying many. In process: each replica counts its own, which still bounds guessing to a tiny rate.
 */
@Injectable()
export class AcceptRateLimit implements CanActivate {
  private readonly hits = new Map<string, { start: number; count: number }>();

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const ip = http.getRequest<Request>().ip ?? 'unknown';
    const now = Date.now();
    let entry = this.hits.get(ip);
    if (entry === undefined || now - entry.start >= WINDOW_MS) {
      if (this.hits.size >= MAX_TRACKED) {
        this.hits.clear();
      }
      entry = { start: now, count: 0 };
      this.hits.set(ip, entry);
    }
    entry.count++;
    if (entry.count > MAX_PER_WINDOW) {
      const retry = Math.ceil((entry.start + WINDOW_MS - now) / 1000);
      http.getResponse<Response>().setHeader('Retry-After', String(retry));
      throw new ApiError(429, `Too many attempts: try again in ${retry} seconds.`);
    }
    return true;
  }
}
