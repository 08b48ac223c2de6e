import { Module } from '@nestjs/common';
import { TokensModule } from '../tokens/tokens.module';
import { BtBridge } from './bt-bridge';
import { FetchBridge } from './fetch-bridge';

/** The host capabilities sandboxed code reaches through bridges: `bt` (tokens) and outbound `fetch`. */
@Module({
  imports: [TokensModule],
  providers: [BtBridge, FetchBridge],
  exports: [BtBridge, FetchBridge],
})
export class SandboxBridgesModule {}
