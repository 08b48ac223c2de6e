import { Param, ParseUUIDPipe } from '@nestjs/common';
import { ApiError } from './api-error';

/** A path id that must be a UUID: anything else is a 400 naming the parameter. */
export const UuidParam = (name = 'id'): ParameterDecorator =>
  Param(name, new ParseUUIDPipe({ exceptionFactory: () => ApiError.field(name, `${name} must be a UUID`) }));
