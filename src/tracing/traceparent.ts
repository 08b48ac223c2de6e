/**
 * The W3C `traceparent` a webhook delivery row keeps of the span that published its event (see
 * currentTraceparent): version 00, built from a span's ids and read back only in that exact form.
 */

/** The ids of a span, as the OpenTelemetry API spells them. */
export interface SpanIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

export function formatTraceparent(ids: SpanIds): string {
  return `00-${ids.traceId}-${ids.spanId}-${(ids.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The ids a `traceparent` names; null for anything else (another version, an all-zero id, other text). */
export function parseTraceparent(value: string): SpanIds | null {
  const match = TRACEPARENT.exec(value);
  if (match === null || ALL_ZERO.test(match[1]) || ALL_ZERO.test(match[2])) {
    return null;
  }
  return { traceId: match[1], spanId: match[2], traceFlags: parseInt(match[3], 16) };
}
