import { Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { TokensModule } from '../tokens/tokens.module';
import { MaintenanceService } from './maintenance.service';
import { PurgeService } from './purge.service';

const MAINTENANCE_CRON = '0 */10 * * * *';
/** Soon after boot, so a database restored or filled while the service was down gets statistics. */
const MAINTENANCE_AFTER_BOOT_MS = 30_000;
/** How often to check whether a bulk load calls for an early run. */
const WRITES_CHECK_MS = 5_000;

/**
 * Registers the purge on PURGE_CRON (configurable, so it cannot be a static @Cron decorator), table
 * maintenance soon after bulk loads, and on the embedded database only (PostgreSQL has autovacuum) after
 * boot and every 10 minutes.
 */
@Module({
  imports: [TokensModule],
  providers: [PurgeService, MaintenanceService],
  exports: [PurgeService, MaintenanceService],
})
export class JobsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
    private readonly purge: PurgeService,
    private readonly maintenance: MaintenanceService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.nodeEnv === 'test') {
      return;
    }
    const job = CronJob.from({
      cronTime: this.config.purgeCron,
      onTick: () => this.purge.run(),
      start: true,
    });
    this.scheduler.addCronJob('purge', job);
    if (this.database.embedded) {
      const maintenance = CronJob.from({
        cronTime: MAINTENANCE_CRON,
        onTick: () => this.maintenance.run(),
        start: true,
      });
      this.scheduler.addCronJob('maintenance', maintenance);
      const afterBoot = setTimeout(() => void this.maintenance.run(), MAINTENANCE_AFTER_BOOT_MS).unref();
      this.scheduler.addTimeout('maintenance-after-boot', afterBoot);
    }
    // Also on PostgreSQL: autovacuum may wait a minute or more after a bulk load, and list plans without
    // statistics scan the whole tenant.
    const early = setInterval(() => void this.maintenance.runIfBusy(), WRITES_CHECK_MS).unref();
    this.scheduler.addInterval('maintenance-on-writes', early);
  }

  onApplicationShutdown(): void {
    for (const name of ['purge', 'maintenance']) {
      if (this.scheduler.doesExist('cron', name)) {
        void this.scheduler.getCronJob(name).stop();
      }
    }
    if (this.scheduler.doesExist('interval', 'maintenance-on-writes')) {
      this.scheduler.deleteInterval('maintenance-on-writes');
    }
    if (this.scheduler.doesExist('timeout', 'maintenance-after-boot')) {
      this.scheduler.deleteTimeout('maintenance-after-boot');
    }
  }
}
