import { Inject, Injectable, Logger } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { KeyInventory } from '../crypto/key-inventory.service';
import { KeyRotation } from '../crypto/key-rotation.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { MetricsService } from '../metrics/metrics.service';
import { JobRunner } from './job-runner';

const DAY_MS = 86_400_000;

/**
 * Cryptoperiods (PCI DSS 3.6.4): the ages of master and tenant keys on /metrics, and the scheduled job
 * that gives a tenant a new data key once its newest one is older than VAULT_TENANT_KEY_MAX_AGE_DAYS.
 * A new data key changes what new writes use; older tokens stay readable under their version until
 * keys:reencrypt moves them. HMAC keys are not rotated (fingerprints and search indexes depend on them).
 * Master keys past VAULT_MASTER_KEY_MAX_AGE_DAYS are logged: rotating them needs an operator (a new
 * key in the HSM or in VAULT_MASTER_KEYS, then keys:rotate-master).
 */
@Injectable()
export class KeyCryptoperiodService {
  private readonly logger = new Logger('Cryptoperiods');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly master: MasterKeyring,
    private readonly rotation: KeyRotation,
    private readonly inventory: KeyInventory,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    metrics: MetricsService,
  ) {
    const masterAges = (): { id: string; provider: string; ageSeconds: number }[] => this.masterKeyAges();
    new Gauge({
      name: 'token_vault_master_key_age_seconds',
      help: 'Age of each master key whose creation date the provider knows (pkcs11 keys the vault generated), by id',
      labelNames: ['key', 'provider'],
      registers: [metrics.registry],
      collect() {
        this.reset();
        for (const { id, provider, ageSeconds } of masterAges()) {
          this.set({ key: id, provider }, ageSeconds);
        }
      },
    });
    const tenantAges = (): Promise<{ kind: string; ageSeconds: number }[]> => this.oldestTenantKeyAges();
    new Gauge({
      name: 'token_vault_tenant_key_max_age_seconds',
      help: 'Age of the oldest tenant key still used for new writes, by kind (data, hmac)',
      labelNames: ['kind'],
      registers: [metrics.registry],
      // Read from the database at scrape time; while it is unreachable the scrape still answers (it reports
      // token_vault_db_reachable 0) and this gauge keeps its last values.
      async collect() {
        let ages: { kind: string; ageSeconds: number }[];
        try {
          ages = await tenantAges();
        } catch {
          return;
        }
        this.reset();
        for (const { kind, ageSeconds } of ages) {
          this.set({ kind }, ageSeconds);
        }
      },
    });
  }

  masterKeyAges(): { id: string; provider: string; ageSeconds: number }[] {
    if (this.master.sealed) {
      return [];
    }
    const keyring = this.master.keyring;
    const now = this.clock.now().getTime();
    return keyring.keyIds.flatMap((id) => {
      const created = keyring.createdAt(id);
      return created === null
        ? []
        : [{ id, provider: keyring.kindOf(id), ageSeconds: Math.floor((now - created.getTime()) / 1000) }];
    });
  }

  async oldestTenantKeyAges(): Promise<{ kind: string; ageSeconds: number }[]> {
    const now = this.clock.now().getTime();
    return (await this.inventory.oldestActiveKeys()).flatMap(({ kind, createdAt }) =>
      createdAt === null ? [] : [{ kind, ageSeconds: Math.floor((now - createdAt.getTime()) / 1000) }],
    );
  }

  /** New data keys for tenants past the cryptoperiod; returns how many tenants got one here. */
  async run(): Promise<number> {
    const { tenantKeyMaxAgeDays, masterKeyMaxAgeDays } = this.config.keyCustody;
    let rotated = 0;
    await this.jobs.runExclusive('key-cryptoperiods', async () => {
      const now = this.clock.now().getTime();
      if (masterKeyMaxAgeDays !== null) {
        for (const { id, ageSeconds } of this.masterKeyAges()) {
          if (ageSeconds * 1000 > masterKeyMaxAgeDays * DAY_MS) {
            this.logger.warn(
              `master key ${id} is older than VAULT_MASTER_KEY_MAX_AGE_DAYS (${masterKeyMaxAgeDays}): create a new one and run keys:rotate-master`,
            );
          }
        }
      }
      if (tenantKeyMaxAgeDays === null) {
        return;
      }
      const cutoff = new Date(now - tenantKeyMaxAgeDays * DAY_MS);
      for (const tenantId of await this.inventory.tenantsWithDataKeysBefore(cutoff)) {
        await this.rotation.rotateDataKey(tenantId);
        rotated++;
      }
      if (rotated > 0) {
        this.logger.log({ rotated }, 'tenant data keys past their cryptoperiod rotated');
      }
    });
    return rotated;
  }
}
