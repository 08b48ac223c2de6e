/**
 * Operator commands: `npx token-vault <command> [options]` (bin/token-vault.js), `npm run cli -- <command>`, or
 * `node dist/src/cli.js <command>` in the image.
 * Each command opens the configured database itself, does one thing, and exits. The commands live in cli/.
 */
// Before anything else loads: an older Node.js is refused in one line (see the file).
import './common/node-version';
import { runCli } from './cli/index';

if (require.main === module) {
  // Exit explicitly: a command is done when it settles, whatever handles a library left open.
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
