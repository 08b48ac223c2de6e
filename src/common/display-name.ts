import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsString, MaxLength, MinLength } from 'class-validator';

export const MAX_NAME_LENGTH = 200;

/** Line breaks and other control characters (C0, DEL, C1, U+2028/2029): each becomes one space. */
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/gu;
/** Invisible format characters (bidi overrides and isolates, zero-width, soft hyphen): removed. */
const FORMAT = /\p{Cf}/gu;

/**
 * A name as the vault keeps it: names reach e-mails, logs and other people's screens, so no control
 * character may ride along (a CR/LF in an invitation's text, a bidi override that reverses a URL).
 */
export function plainName(name: string): string {
  return name.replace(FORMAT, '').replace(CONTROL, ' ').trim();
}

/**
 * The `name` of a resource (application, reactor, formula, proxy): a string, control and format
 * characters stripped (`plainName`), then 1 to 200 characters.
 */
export function DisplayName(): PropertyDecorator {
  return applyDecorators(
    Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? plainName(value) : value)),
    IsString(),
    MinLength(1),
    MaxLength(MAX_NAME_LENGTH),
  );
}
