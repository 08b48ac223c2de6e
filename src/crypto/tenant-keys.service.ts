import { Inject, Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createSecretKey, KeyObject } from 'node:crypto';
import { EntityManager, Repository } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Transactions } from '../database/transactions';
import { ApiError, ChosenStateError } from '../common/api-error';
import { openKeyProviders } from './key-providers';
import { ChainedKeyProvider, EnvKeyProvider } from './master-key-provider';
import { combineShares, ParsedShare } from './shamir';
import { randomKey } from './secrets';
import { TenantKey, TenantKeyKind } from './tenant-key.entity';
import { checkShare } from './unseal-splits';

/** What POST /unseal answers. */
export interface UnsealStatus {
  sealed: boolean;
  shares_received: number;
}

export interface VersionedKey {
  version: number;
  key: KeyObject;
}

/** How long a replica trusts its idea of a tenant's newest data-key version (rotation by another replica). */
const ACTIVE_VERSION_TTL_MS = 30_000;

/**
 * Holds the master keyring and hands out tenant keys, unwrapped on first use and cached in memory as
 * KeyObjects (a raw Buffer key costs Node's cipher and HMAC constructors a key import on every call).
 * Wrapped keys live in `tenant_keys`; unwrapped keys never leave this process.
 */
@Injectable()
export class TenantKeysService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Keyring');
  private keyring: ChainedKeyProvider;
  private readonly unwrapped = new Map<string, KeyObject>();
  private readonly active = new Map<string, { version: number; until: number }>();
  /** Non-null while sealed: the checked Shamir shares held so far, one per index (VAULT_SEALED=true). */
  private unsealShares: ParsedShare[] | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectRepository(TenantKey) private readonly keys: Repository<TenantKey>,
    private readonly transactions: Transactions,
  ) {}

  /** Loads the master keys, then refuses to boot unless they open every tenant key in the database. */
  async onModuleInit(): Promise<void> {
    if (this.config.keyCustody.sealed) {
      this.unsealShares = [];
      this.logger.warn(
        'Sealed: data routes answer 503 until `npm run cli -- unseal` gives enough key shares.',
      );
      return;
    }
    const { provider, devKey } = openKeyProviders(this.config);
    this.keyring = provider;
    if (devKey !== null) {
      this.logger.warn(
        `VAULT_MASTER_KEYS is not set: using the development master key in ${this.config.dataDir}/master.key` +
          (devKey.created ? ' (just created)' : '') +
          '. Never run like this in production.',
      );
    }
    const problem = await this.masterKeysProblem();
    if (problem !== null) {
      throw new MasterKeysMismatchError(problem);
    }
  }

  /**
   * Null when the configured master keys can open the tenant keys: every master key id that wraps a
   * tenant key is configured, and one tenant key per id unwraps (same id, other key material fails
   * there). Otherwise what is wrong and what to do, naming key ids only. At boot and on /health/ready,
   * since another replica may rotate to a master key this one was not given.
   */
  async masterKeysProblem(keyring: ChainedKeyProvider = this.keyring): Promise<string | null> {
    // Not migrated yet (MIGRATIONS_RUN=false before `cli migrate`): no tenant key to open; readiness says so.
    const [{ present }]: { present: boolean }[] = await this.keys.query(
      "SELECT to_regclass('tenant_keys') IS NOT NULL AS present",
    );
    if (!present) {
      return null;
    }
    const rows: {
      master_key_id: string;
      tenant_id: string;
      kind: TenantKeyKind;
      version: number;
      wrapped: string;
    }[] = await this.keys.query(
      'SELECT DISTINCT ON (master_key_id) master_key_id, tenant_id, kind, version, wrapped FROM tenant_keys ORDER BY master_key_id',
    );
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

  /** Started with VAULT_SEALED=true and not yet given enough shares. */
  get sealed(): boolean {
    return this.unsealShares !== null;
  }

  /**
   * Takes one Shamir share (keys:split), refused at once (400) unless it is one of the recorded split's
   * (unseal-splits.ts). Held: one per index, of the newest split only, so at most threshold - 1 wait; at the
   * threshold they combine, and once the master keys open the tenant keys the vault is unsealed. Keys that
   * do not open them drop every share: the operators start again.
   */
  async unseal(text: string): Promise<UnsealStatus> {
    if (this.unsealShares === null) {
      return { sealed: false, shares_received: 0 };
    }
    const share = await checkShare(this.keys.manager, text);
    if (this.unsealShares === null) {
      return { sealed: false, shares_received: 0 };
    }
    this.unsealShares = [
      ...this.unsealShares.filter((s) => s.splitId === share.splitId && s.index !== share.index),
      share,
    ];
    if (this.unsealShares.length < share.threshold) {
      return { sealed: true, shares_received: this.unsealShares.length };
    }
    const keys = await combineShares(this.unsealShares.map((s) => s.text));
    const keyring = keys === null ? null : new ChainedKeyProvider([new EnvKeyProvider(keys)]);
    keys?.forEach((k) => k.key.fill(0));
    const problem = keyring === null ? 'the shares do not combine' : await this.masterKeysProblem(keyring);
    if (!this.sealed) {
      // Another request unsealed meanwhile.
      keyring?.close();
      return { sealed: false, shares_received: 0 };
    }
    if (keyring === null || problem !== null) {
      this.unsealShares = [];
      this.logger.error(`Unseal: the shares give master keys that do not open the tenant keys: ${problem}`);
      throw new ApiError(
        409,
        'The shares combine into master keys that do not open the tenant keys: every share was dropped, start again.',
      );
    }
    this.keyring = keyring;
    this.unsealShares = null;
    this.logger.log('Unsealed: the master keys are loaded.');
    return { sealed: false, shares_received: 0 };
  }

  /** Drops the held shares (cli unseal:reset), so an unseal starts again; a checked share proves a key holder asks. */
  async resetUnseal(text: string): Promise<UnsealStatus> {
    if (this.unsealShares === null) {
      return { sealed: false, shares_received: 0 };
    }
    await checkShare(this.keys.manager, text);
    this.unsealShares = [];
    this.logger.warn('Unseal: every held share was dropped (unseal:reset).');
    return { sealed: true, shares_received: 0 };
  }

  private assertUnsealed(): void {
    if (this.unsealShares !== null) {
      throw new ChosenStateError(
        503,
        'The vault is sealed: its master keys are not loaded until enough key holders run `cli unseal`.',
        undefined,
        { 'Retry-After': '30' },
      );
    }
  }

  onModuleDestroy(): void {
    this.keyring?.close();
  }

  get masterKeyring(): ChainedKeyProvider {
    return this.keyring;
  }

  /** Creates version 1 of the tenant's data and HMAC keys (in the tenant-creation transaction, when open). */
  async createTenantKeys(tenantId: string): Promise<void> {
    for (const kind of ['data', 'hmac'] as const) {
      await this.insertKey(this.transactions.manager, tenantId, kind, 1);
    }
  }

  /** The newest data key: new ciphertexts use it. */
  async activeDataKey(tenantId: string): Promise<VersionedKey> {
    this.assertUnsealed();
    const cached = this.active.get(tenantId);
    let version = cached !== undefined && cached.until > Date.now() ? cached.version : undefined;
    if (version === undefined) {
      const row = await this.keys.findOne({ where: { tenantId, kind: 'data' }, order: { version: 'DESC' } });
      if (row === null) {
        throw new Error('tenant has no data key');
      }
      version = row.version;
      this.active.set(tenantId, { version, until: Date.now() + ACTIVE_VERSION_TTL_MS });
      await this.remember(row);
    }
    return { version, key: await this.key(tenantId, 'data', version) };
  }

  async dataKey(tenantId: string, version: number): Promise<KeyObject> {
    return this.key(tenantId, 'data', version);
  }

  /** The HMAC key for fingerprints and blind indexes: one per tenant, never rotated with the data keys. */
  async hmacKey(tenantId: string): Promise<KeyObject> {
    return this.key(tenantId, 'hmac', 1);
  }

  /** Adds a new data-key version for the tenant; new writes use it from now on. */
  async rotateDataKey(tenantId: string): Promise<number> {
    return this.keys.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tenant-keys:${tenantId}`]);
      const latest = await manager.findOne(TenantKey, {
        where: { tenantId, kind: 'data' },
        order: { version: 'DESC' },
      });
      const version = (latest?.version ?? 0) + 1;
      await this.insertKey(manager, tenantId, 'data', version);
      this.active.delete(tenantId);
      return version;
    });
  }

  /**
   * Re-wraps every tenant key not yet under the active master key, in batches. Each row is replaced only
   * if it is unchanged since it was read, so it is safe while the service runs and on several replicas,
   * and an interrupted run resumes where it stopped. Returns how many keys moved; `progress` hears after
   * each batch how many moved so far and how many were left at the start.
   */
  async rewrapUnderActiveMaster(
    batchSize = 200,
    progress?: (moved: number, total: number) => void,
  ): Promise<number> {
    const active = this.keyring.activeKeyId;
    const total = await this.keys
      .createQueryBuilder('k')
      .where('k.master_key_id <> :active', { active })
      .getCount();
    let moved = 0;
    for (;;) {
      const rows = await this.keys
        .createQueryBuilder('k')
        .where('k.master_key_id <> :active', { active })
        .orderBy('k.tenant_id')
        .limit(batchSize)
        .getMany();
      if (rows.length === 0) {
        return moved;
      }
      for (const row of rows) {
        const context = keyContext(row.tenantId, row.kind, row.version);
        const plain = await this.keyring.unwrap(row.wrapped, context);
        const wrapped = await this.keyring.wrap(plain, context);
        plain.fill(0);
        const result = await this.keys.update(
          { tenantId: row.tenantId, kind: row.kind, version: row.version, wrapped: row.wrapped },
          { wrapped, masterKeyId: active },
        );
        moved += result.affected ?? 0;
      }
      progress?.(moved, total);
    }
  }

  /** Tenants whose newest data key is newer than some of their ciphertexts' key: re-encryption work. */
  async latestDataKeyVersions(): Promise<Map<string, number>> {
    const rows: { tenant_id: string; version: number }[] = await this.keys.query(
      `SELECT tenant_id, max(version) AS version FROM tenant_keys WHERE kind = 'data' GROUP BY tenant_id`,
    );
    return new Map(rows.map((r) => [r.tenant_id, Number(r.version)]));
  }

  private async insertKey(
    manager: EntityManager,
    tenantId: string,
    kind: TenantKeyKind,
    version: number,
  ): Promise<void> {
    this.assertUnsealed();
    const plain = randomKey();
    const wrapped = await this.keyring.wrap(plain, keyContext(tenantId, kind, version));
    plain.fill(0);
    await manager.insert(TenantKey, {
      tenantId,
      kind,
      version,
      masterKeyId: this.keyring.activeKeyId,
      wrapped,
    });
  }

  private async key(tenantId: string, kind: TenantKeyKind, version: number): Promise<KeyObject> {
    this.assertUnsealed();
    const cached = this.unwrapped.get(`${tenantId}:${kind}:${version}`);
    if (cached !== undefined) {
      return cached;
    }
    // Through the open transaction, if any: on the embedded database (one connection) a read beside it
    // would wait for it forever.
    const row = await this.transactions.manager.findOne(TenantKey, { where: { tenantId, kind, version } });
    if (row === null) {
      throw new Error(`tenant key ${kind} v${version} not found`);
    }
    return this.remember(row);
  }

  private async remember(row: TenantKey): Promise<KeyObject> {
    const plain = await this.keyring.unwrap(row.wrapped, keyContext(row.tenantId, row.kind, row.version));
    const key = createSecretKey(plain);
    // The KeyObject holds its own copy: do not leave a second one on the JS heap.
    plain.fill(0);
    this.unwrapped.set(`${row.tenantId}:${row.kind}:${row.version}`, key);
    return key;
  }
}

/** The configured master keys cannot open the database's tenant keys: the service refuses to start. */
export class MasterKeysMismatchError extends Error {
  override name = 'MasterKeysMismatchError';
}

/** AAD of a wrapped key: a wrapped key copied to another tenant, kind or version does not open. */
export function keyContext(tenantId: string, kind: TenantKeyKind, version: number): string {
  return `tenant:${tenantId}:${kind}:${version}`;
}
