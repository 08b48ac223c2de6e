import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantKey } from './tenant-key.entity';
import { TenantCipher } from './tenant-cipher.service';
import { TenantKeysService } from './tenant-keys.service';
import { KeyInventory } from './key-inventory.service';
import { UnsealShares } from './unseal-shares.service';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([TenantKey])],
  providers: [TenantKeysService, TenantCipher, KeyInventory, UnsealShares],
  exports: [TenantKeysService, TenantCipher, KeyInventory, UnsealShares],
})
export class CryptoModule {}
