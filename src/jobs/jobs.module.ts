import { Inject, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TokensModule } from '../tokens/tokens.module';
import { PurgeService } from './purge.service';

/** Registers the purge on PURGE_CRON (configurable, so it cannot be a static @Cron decorator). */
@Module({
  imports: [TokensModule],
  providers: [PurgeService],
  exports: [PurgeService],
})
export class JobsModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly purge: PurgeService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.nodeEnv === 'test') {
      return;
    }
    const job = CronJob.from({ cronTime: this.config.purgeCron, onTick: () => this.purge.run(), start: true });
    this.scheduler.addCronJob('purge', job);
  }

  onApplicationShutdown(): void {
    if (this.scheduler.doesExist('cron', 'purge')) {
      void this.scheduler.getCronJob('purge').stop();
    }
  }
}
