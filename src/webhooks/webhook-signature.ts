import { createHmac, randomBytes } from 'node:crypto';
import { base58Fixed } from '../crypto/secrets';

/** The header of every delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the secret>`. */
export const SIGNATURE_HEADER = 'x-webhook-signature';
/** The event's id, the same on every retry of one delivery: what a receiver deduplicates on. */
export const EVENT_ID_HEADER = 'x-webhook-id';
export const EVENT_TYPE_HEADER = 'x-webhook-event';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A webhook's signing secret: `whsec_` + base58 of 32 random bytes, shown once when the webhook is created. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + base58Fixed(randomBytes(SECRET_BYTES));
}

/** The signature header's value for `body` sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return `t=${timestamp},v1=${mac}`;
}
