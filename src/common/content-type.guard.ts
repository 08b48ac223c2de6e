import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiUnsupportedMediaTypeResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiError } from './api-error';

/** 415 unless the request body has the given media type; runs before body validation. */
export function RequireContentType(mediaType: string): MethodDecorator {
  @Injectable()
  class ContentTypeGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      const header = context.switchToHttp().getRequest<Request>().headers['content-type'] ?? '';
      if (header.split(';')[0].trim().toLowerCase() !== mediaType) {
        throw new ApiError(415, `The Content-Type must be ${mediaType}.`);
      }
      return true;
    }
  }
  return applyDecorators(
    UseGuards(ContentTypeGuard),
    ApiUnsupportedMediaTypeResponse({ description: `The Content-Type is not ${mediaType}.` }),
  );
}
