import { Global, Module } from '@nestjs/common';
import { TenantCipher } from './tenant-cipher.service';
import { TenantKeysRepository } from './tenant-keys.repository';
import { TenantKeysService } from './tenant-keys.service';
import { KeyInventory } from './key-inventory.service';
import { KeyRotation } from './key-rotation.service';
import { MasterKeyring } from './master-keyring.service';
import { UnsealShares } from './unseal-shares.service';

const PROVIDERS = [MasterKeyring, UnsealShares, TenantKeysService, KeyRotation, KeyInventory, TenantCipher];

@Global()
@Module({
  providers: [...PROVIDERS, TenantKeysRepository],
  exports: PROVIDERS,
})
export class CryptoModule {}
