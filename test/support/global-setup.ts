import { createTemplateDatabase, postgresUrl } from './databases';

export default async function globalSetup(): Promise<void> {
  const url = postgresUrl();
  if (url !== null) {
    await createTemplateDatabase(url);
  }
}
