import { removeSoftHsmDirectory } from '../support/softhsm-directory';

export default function globalTeardown(): void {
  removeSoftHsmDirectory();
}
