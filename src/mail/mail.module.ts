import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Mailer, mailerFor } from './mailer';

/** The one Mailer (SMTP_URL, or the log in development): invitations and webhook notices use it. */
@Module({
  providers: [
    { provide: Mailer, useFactory: (config: AppConfig) => mailerFor(config), inject: [APP_CONFIG] },
  ],
  exports: [Mailer],
})
export class MailModule {}
