import { Module } from '@nestjs/common';
import { ClientKeysController } from './client-keys.controller';
import { ClientKeysRepository } from './client-keys.repository';
import { ClientKeysService } from './client-keys.service';

/** /keys: client encryption keys, and the opening of what browsers encrypted to them. */
@Module({
  controllers: [ClientKeysController],
  providers: [ClientKeysService, ClientKeysRepository],
  exports: [ClientKeysService],
})
export class ClientKeysModule {}
