import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantKey } from './tenant-key.entity';
import { TenantKeysService } from './tenant-keys.service';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([TenantKey])],
  providers: [TenantKeysService],
  exports: [TenantKeysService],
})
export class CryptoModule {}
