import { Client } from 'pg';
import { postgresUrl, removeEmbeddedTemplate, templateDatabase } from './databases';
import { removeSoftHsmDirectory } from './softhsm-directory';

export default async function globalTeardown(): Promise<void> {
  removeSoftHsmDirectory();
  const url = postgresUrl();
  if (url === null) {
    removeEmbeddedTemplate();
    return;
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${templateDatabase()} WITH (FORCE)`);
  await client.end();
}
