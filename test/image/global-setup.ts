import { prepareSoftHsmDirectory } from '../support/softhsm-directory';

/** The SoftHSM2 token folder of pkcs11.image-spec.ts, set in the real environment before the tests run. */
export default function globalSetup(): void {
  prepareSoftHsmDirectory();
}
