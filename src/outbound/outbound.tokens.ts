/** Injection tokens for the two side effects of the outbound client; tests replace them (see OutboundModule). */
export const OUTBOUND_RESOLVER = Symbol('OUTBOUND_RESOLVER');
export const OUTBOUND_CONNECTOR = Symbol('OUTBOUND_CONNECTOR');
