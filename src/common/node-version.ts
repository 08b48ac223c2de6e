/**
 * The first thing main.ts and cli.ts load: on an older Node.js the vault would boot, report ready and then
 * hang on the features it needs (isolated-vm's sandbox was built for this Node), so refuse in one line.
 * Keep this file free of imports and of syntax newer than Node 20: it must run on the Node it refuses.
 */

/** The major version package.json's engines asks for (">=24 <25"); a unit test keeps the two in step. */
export const REQUIRED_NODE_MAJOR = 24;

/** The refusal for a Node.js older than REQUIRED_NODE_MAJOR, or null when this one will do. */
export function nodeVersionProblem(version: string, execPath: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? NaN);
  if (major >= REQUIRED_NODE_MAJOR) {
    return null;
  }
  return (
    `Token Vault cannot start: it needs Node.js ${REQUIRED_NODE_MAJOR} and this is Node.js ${version} ` +
    `(${execPath}). Run it with the project's Node: \`npm start\` (or \`npm run cli -- <command>\`) uses the ` +
    `pinned one in node_modules/.bin; or install Node.js ${REQUIRED_NODE_MAJOR}.`
  );
}

const problem = nodeVersionProblem(process.version, process.execPath);
if (problem !== null) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
