import { createEmbeddedTemplate, createTemplateDatabase, postgresUrl } from './databases';
import { prepareSoftHsmDirectory } from './softhsm-directory';

export default async function globalSetup(): Promise<void> {
  // Before the workers start: the PKCS#11 library reads SOFTHSM2_CONF from the real environment.
  prepareSoftHsmDirectory();
  const url = postgresUrl();
  if (url !== null) {
    await createTemplateDatabase(url);
  } else {
    await createEmbeddedTemplate();
  }
}
