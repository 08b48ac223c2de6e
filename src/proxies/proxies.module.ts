import { AuthModule } from '../auth/auth.module';
import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { ExpressionsModule } from '../expressions';
import { SandboxBridgesModule } from '../sandbox-bridges/sandbox-bridges.module';
import { TokensModule } from '../tokens/tokens.module';
import { ProxiesController } from './proxies.controller';
import { ProxiesRepository } from './proxies.repository';
import { ProxiesService } from './proxies.service';
import { ProxyCache } from './proxy-cache';
import { ProxyForwarderController } from './proxy-forwarder.controller';
import { ProxyForwarder } from './proxy-forwarder.service';
import { ProxyTransforms } from './proxy-transforms';
import { TokenizeTransform } from './tokenize-transform';

/** Configured proxies (/proxies) and the /proxy forwarder. */
@Module({
  imports: [ApplicationsModule, AuthModule, ExpressionsModule, TokensModule, SandboxBridgesModule],
  controllers: [ProxiesController, ProxyForwarderController],
  providers: [
    ProxiesService,
    ProxiesRepository,
    ProxyCache,
    ProxyForwarder,
    ProxyTransforms,
    TokenizeTransform,
  ],
  exports: [ProxiesService],
})
export class ProxiesModule {}
