import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ExpressionsModule } from '../expressions';
import { TokenCipher } from './token-cipher.service';
import { Token } from './token.entity';
import { TokensController } from './tokens.controller';
import { TokensRepository } from './tokens.repository';
import { TokensService } from './tokens.service';

@Module({
  imports: [TypeOrmModule.forFeature([Token]), ExpressionsModule],
  controllers: [TokensController],
  providers: [TokensService, TokensRepository, TokenCipher],
  exports: [TokensService],
})
export class TokensModule {}
