import type { Proxy } from './proxy.entity';

/** What the forwarder needs of a configured proxy: the row and its configuration in clear (cached per replica). */
export interface LoadedProxy {
  proxy: Proxy;
  configuration: Record<string, string>;
}
