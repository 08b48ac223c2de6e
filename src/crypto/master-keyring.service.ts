import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ChosenStateError } from '../common/api-error';
import { openKeyProviders } from './key-providers';
import { ChainedKeyProvider } from './master-key-provider';
import { keyContext } from './tenant-key.entity';
import { TenantKeysRepository } from './tenant-keys.repository';

/**
 * The master keys this process holds: loaded at boot, or later by an unseal (UnsealShares) when started
 * sealed, and checked against the tenant keys in the database before they are used.
 */
@Injectable()
export class MasterKeyring implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Keyring');
  private loaded: ChainedKeyProvider | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: TenantKeysRepository,
  ) {}

  /** Loads the master keys, then refuses to boot unless they open every tenant key in the database. */
  async onModuleInit(): Promise<void> {
    if (this.config.keyCustody.sealed) {
      this.logger.warn(
        'Sealed: data routes answer 503 until `npm run cli -- unseal` gives enough key shares.',
      );
      return;
    }
    const { provider, devKey } = openKeyProviders(this.config);
    this.loaded = provider;
    if (devKey !== null) {
      this.logger.warn(
        `VAULT_MASTER_KEYS is not set: using the development master key in ${this.config.dataDir}/master.key` +
          (devKey.created ? ' (just created)' : '') +
          '. Never run like this in production.',
      );
    }
    const problem = await this.problem();
    if (problem !== null) {
      throw new MasterKeysMismatchError(problem);
    }
  }

  onModuleDestroy(): void {
    this.loaded?.close();
  }

  /** Started with VAULT_SEALED=true and not yet given enough shares. */
  get sealed(): boolean {
    return this.config.keyCustody.sealed && this.loaded === undefined;
  }

  /** The loaded master keys; 503 while sealed. */
  get keyring(): ChainedKeyProvider {
    this.assertUnsealed();
    return this.loaded as ChainedKeyProvider;
  }

  /** Master keys an unseal combined, already checked with `problem`. */
  load(keyring: ChainedKeyProvider): void {
    this.loaded = keyring;
    this.logger.log('Unsealed: the master keys are loaded.');
  }

  assertUnsealed(): void {
    if (this.sealed) {
      throw new ChosenStateError(
        503,
        'The vault is sealed: its master keys are not loaded until enough key holders run `cli unseal`.',
        undefined,
        { 'Retry-After': '30' },
      );
    }
  }

  /**
   * Null when `keyring` can open the tenant keys: every master key id that wraps a tenant key is in it,
   * and one tenant key per id unwraps (same id, other key material fails there). Otherwise what is wrong
   * and what to do, naming key ids only. At boot, at unseal and on /health/ready, since another replica
   * may rotate to a master key this one was not given.
   */
  async problem(keyring: ChainedKeyProvider = this.keyring): Promise<string | null> {
    // Not migrated yet (MIGRATIONS_RUN=false before `cli migrate`): no tenant key to open; readiness says so.
    if (!(await this.keys.tableExists())) {
      return null;
    }
    const rows = await this.keys.onePerMasterKey();
    const missing = rows.filter((r) => !keyring.has(r.master_key_id)).map((r) => r.master_key_id);
    if (missing.length > 0) {
      return (
        `the tenant keys in the database are wrapped with master key id(s) ${missing.map((id) => `"${id}"`).join(', ')}, ` +
        `which neither VAULT_MASTER_KEYS nor VAULT_PKCS11_KEY_LABELS lists. To change master keys, list the new key ` +
        `first and keep the old one after it (VAULT_MASTER_KEYS=new-id:...,old-id:...), run \`npm run cli -- keys:rotate-master\`, ` +
        `then drop the old one.`
      );
    }
    const wrong: string[] = [];
    for (const row of rows) {
      try {
        (await keyring.unwrap(row.wrapped, keyContext(row.tenant_id, row.kind, row.version))).fill(0);
      } catch {
        wrong.push(row.master_key_id);
      }
    }
    if (wrong.length > 0) {
      return (
        `master key id(s) ${wrong.map((id) => `"${id}"`).join(', ')} in the configured master keys do not open the tenant ` +
        `keys wrapped under that id: the key material differs from the one they were wrapped with. Set the ` +
        `original key for that id.`
      );
    }
    return null;
  }
}

/** The configured master keys cannot open the database's tenant keys: the service refuses to start. */
export class MasterKeysMismatchError extends Error {
  override name = 'MasterKeysMismatchError';
}
