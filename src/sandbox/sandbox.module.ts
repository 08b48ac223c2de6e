import { Global, Module } from '@nestjs/common';
import { IsolatedVmSandbox } from './isolated-vm.sandbox';
import { SandboxProvider } from './sandbox.provider';

@Global()
@Module({
  providers: [{ provide: SandboxProvider, useClass: IsolatedVmSandbox }],
  exports: [SandboxProvider],
})
export class SandboxModule {}
