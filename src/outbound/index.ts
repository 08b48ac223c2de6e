export { classifyAddress } from './address-ranges';
export type { BlockedRange } from './address-ranges';
export { createSystemResolver, createTlsConnector, DestinationGuard } from './destination-guard';
export type {
  ConnectTarget,
  OutboundConnector,
  OutboundResolver,
  ResolvedAddress,
} from './destination-guard';
export { checkDestinationUrl, checkHostname } from './destination-url';
export type { DestinationCheck, StaticCheckOptions } from './destination-url';
export { HOP_BY_HOP_HEADERS, stripHopByHop } from './hop-by-hop';
export { OutboundClient } from './outbound-client';
export type { BufferedOutboundResponse, OutboundRequest, OutboundResponse } from './outbound-client';
export { OUTBOUND_STATUS, OutboundError } from './outbound.errors';
export type { OutboundFailure } from './outbound.errors';
export { OutboundModule } from './outbound.module';
export type { OutboundOverrides } from './outbound.module';
export { OUTBOUND_CONNECTOR, OUTBOUND_RESOLVER } from './outbound.tokens';
