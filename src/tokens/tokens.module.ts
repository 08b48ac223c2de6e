import { Module } from '@nestjs/common';
import { ClientKeysModule } from '../client-keys/client-keys.module';
import { ExpressionsModule } from '../expressions';
import { DedupRateLimit } from './dedup-rate-limit';
import { DetokenizeController } from './detokenize.controller';
import { DetokenizeService } from './detokenize.service';
import { ReencryptionService } from './reencryption.service';
import { TokenInserter } from './token-inserter.service';
import { TokenIntentConversion } from './token-intent-conversion.service';
import { TokenPresentation } from './token-presentation.service';
import { TokenUpdates } from './token-updates.service';
import { TokenBuilder } from './token-builder.service';
import { TokenCipher } from './token-cipher.service';
import { TokenizeController } from './tokenize.controller';
import { TokenizeService } from './tokenize.service';
import { TokensController } from './tokens.controller';
import { TokensV2Controller } from './tokens-v2.controller';
import { TokensV2Service } from './tokens-v2.service';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';
import { WriteCounter } from './write-counter';

@Module({
  imports: [ExpressionsModule, ClientKeysModule],
  controllers: [TokensController, TokensV2Controller, TokenizeController, DetokenizeController],
  providers: [
    TokensService,
    TokensV2Service,
    TokensRepository,
    TokenCipher,
    TokenBuilder,
    TokenizeService,
    DetokenizeService,
    ReencryptionService,
    WriteCounter,
    DedupRateLimit,
    TokenInserter,
    TokenPresentation,
    TokenUpdates,
    TokenIntentConversion,
  ],
  exports: [
    TokensService,
    TokenBuilder,
    TokenIntentConversion,
    TokenUpdates,
    DetokenizeService,
    TokenizeService,
    ReencryptionService,
    WriteCounter,
  ],
})
export class TokensModule {}
