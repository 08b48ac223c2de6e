import { Module } from '@nestjs/common';
import { ClientKeysModule } from '../client-keys/client-keys.module';
import { TokensModule } from '../tokens/tokens.module';
import { TokenIntentRepository } from './token-intent.repository';
import { TokenIntentsController } from './token-intents.controller';
import { TokenIntentsService } from './token-intents.service';

@Module({
  imports: [TokensModule, ClientKeysModule],
  controllers: [TokenIntentsController],
  providers: [TokenIntentsService, TokenIntentRepository],
  exports: [TokenIntentsService],
})
export class TokenIntentsModule {}
