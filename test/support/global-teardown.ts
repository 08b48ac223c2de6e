import { Client } from 'pg';
import { postgresUrl, TEMPLATE_DATABASE } from './databases';

export default async function globalTeardown(): Promise<void> {
  const url = postgresUrl();
  if (url === null) {
    return;
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
  await client.end();
}
