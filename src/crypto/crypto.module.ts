import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantKey } from './tenant-key.entity';
import { TenantCipher } from './tenant-cipher.service';
import { TenantKeysService } from './tenant-keys.service';
import { KeyInventory } from './key-inventory.service';
import { KeyRotation } from './key-rotation.service';
import { MasterKeyring } from './master-keyring.service';
import { UnsealShares } from './unseal-shares.service';

const PROVIDERS = [MasterKeyring, UnsealShares, TenantKeysService, KeyRotation, KeyInventory, TenantCipher];

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([TenantKey])],
  providers: PROVIDERS,
  exports: PROVIDERS,
})
export class CryptoModule {}
