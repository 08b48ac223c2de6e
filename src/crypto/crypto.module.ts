import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantKey } from './tenant-key.entity';
import { TenantCipher } from './tenant-cipher.service';
import { TenantKeysService } from './tenant-keys.service';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([TenantKey])],
  providers: [TenantKeysService, TenantCipher],
  exports: [TenantKeysService, TenantCipher],
})
export class CryptoModule {}
