const FORMAT_ERROR = 'must be an ISO 8601 date-time or a M/D/YYYY date';
const PAST_ERROR = 'must be in the future';

// 2030-01-02T03:04[:05[.678]][Z|+02:00|+0200]; no offset means UTC (spec §4.2)
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/;
const SHORT_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

/** Parse spec §4.2 expires_at: ISO-8601 date-time with offset ('2030-01-02T03:04:05+02:00', 'Z'), date-time WITHOUT offset = UTC ('2030-01-02T03:04:05'), short date 'M/D/YYYY' or 'MM/DD/YYYY' = 00:00 UTC that day. Anything else -> { error: 'must be an ISO 8601 date-time or a M/D/YYYY date' }. A time not after `now` -> { error: 'must be in the future' }. Invalid calendar dates (2/30/2030, month 13) -> error. */
export function parseExpiresAt(value: unknown, now: Date): { date: Date } | { error: string } {
  const date = typeof value === 'string' ? (parseDateTime(value) ?? parseShortDate(value)) : null;
  if (date === null) {
    return { error: FORMAT_ERROR };
  }
  return date.getTime() > now.getTime() ? { date } : { error: PAST_ERROR };
}

function parseDateTime(value: string): Date | null {
  const m = ISO_DATE_TIME.exec(value);
  if (!m) {
    return null;
  }
  const [, year, month, day, hour, minute, second = '0', fraction = '', offset = 'Z'] = m;
  const offsetMinutes = parseOffset(offset);
  if (offsetMinutes === null || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) {
    return null;
  }
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3));
  const date = utcDate(Number(year), Number(month), Number(day), [
    Number(hour),
    Number(minute),
    Number(second),
    millis,
  ]);
  return date === null ? null : new Date(date.getTime() - offsetMinutes * 60_000);
}

function parseShortDate(value: string): Date | null {
  const m = SHORT_DATE.exec(value);
  return m ? utcDate(Number(m[3]), Number(m[1]), Number(m[2]), [0, 0, 0, 0]) : null;
}

/** Minutes east of UTC, or null when out of range. */
function parseOffset(offset: string): number | null {
  if (offset === 'Z') {
    return 0;
  }
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) {
    return null;
  }
  return (offset.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}

/** A UTC date for a real calendar day, or null (month 13, February 30, ...). */
function utcDate(
  year: number,
  month: number,
  day: number,
  time: [number, number, number, number],
): Date | null {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return null;
  }
  const date = new Date(0);
  // setUTCFullYear rather than Date.UTC, which maps years 0-99 to 1900-1999
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(...time);
  return date;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
