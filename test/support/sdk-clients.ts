import type { AddressInfo } from 'node:net';
import { BasisTheoryClient } from '@basis-theory/node-sdk';
import { BasisTheory } from '@basis-theory/basis-theory-js';
import type { BasisTheory as InitializedBasisTheory } from '@basis-theory/basis-theory-js/types/sdk';
import type { TestContext } from './test-app';

/**
 * Both official SDKs pointed at a test vault on 127.0.0.1, as a team leaving the hosted vault would
 * point them.
 */
export class SdkClients {
  private constructor(readonly base: string) {}

  /** Starts the context's vault listening on a free port of 127.0.0.1. */
  static async listen(ctx: TestContext): Promise<SdkClients> {
    await ctx.vault.app.listen(0, '127.0.0.1');
    return new SdkClients(
      `http://127.0.0.1:${(ctx.vault.app.getHttpServer().address() as AddressInfo).port}`,
    );
  }

  node(apiKey: string): BasisTheoryClient {
    return new BasisTheoryClient({ apiKey, baseUrl: this.base, maxRetries: 0 });
  }

  /**
   * basis-theory-js rewrites every base URL to https unless its host is literally `localhost`; the test
   * server speaks plain HTTP on 127.0.0.1, so the services' clients are pointed back at it after init.
   */
  async js(apiKey: string): Promise<InitializedBasisTheory> {
    const bt = await new BasisTheory().init(apiKey, { apiBaseUrl: this.base });
    for (const service of Object.values(bt as unknown as Record<string, unknown>)) {
      const client = (service as { client?: { defaults: { baseURL?: string } } } | null)?.client;
      if (client?.defaults.baseURL !== undefined) {
        client.defaults.baseURL = client.defaults.baseURL.replace(/^https:/, 'http:');
      }
    }
    return bt;
  }
}
