import { DynamicModule, Module } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { APP_CONFIG, AppConfig, ConfigError } from '../config/app-config';
import {
  createSystemResolver,
  createTlsConnector,
  OutboundConnector,
  OutboundResolver,
} from './destination-guard';
import { OutboundClient } from './outbound-client';
import { OUTBOUND_CONNECTOR, OUTBOUND_RESOLVER } from './outbound.tokens';

/** Test seams: a resolver that maps test names to 127.0.0.1, a connector that records or refuses. */
export interface OutboundOverrides {
  resolver?: OutboundResolver;
  connector?: OutboundConnector;
}

function defaultConnector(config: AppConfig): OutboundConnector {
  if (config.proxyCaFile === null) {
    return createTlsConnector();
  }
  let extraCa: Buffer;
  try {
    extraCa = readFileSync(config.proxyCaFile);
  } catch {
    throw new ConfigError('PROXY_CA_FILE could not be read');
  }
  return createTlsConnector({ extraCa });
}

/**
 * Registered once, at the root, and global: every feature that leaves the vault (proxy, sandbox fetch)
 * injects the same OutboundClient, so there is one guard and one set of connection pools.
 */
@Module({})
export class OutboundModule {
  static forRoot(overrides: OutboundOverrides = {}): DynamicModule {
    return {
      module: OutboundModule,
      global: true,
      providers: [
        {
          provide: OUTBOUND_RESOLVER,
          useFactory: () => overrides.resolver ?? createSystemResolver(),
        },
        {
          provide: OUTBOUND_CONNECTOR,
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => overrides.connector ?? defaultConnector(config),
        },
        OutboundClient,
      ],
      exports: [OutboundClient],
    };
  }
}
