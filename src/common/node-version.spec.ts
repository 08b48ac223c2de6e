import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeVersionProblem, REQUIRED_NODE_MAJOR } from './node-version';

describe('nodeVersionProblem', () => {
  it('asks for the major version package.json engines names', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      engines: { node: string };
    };
    expect(pkg.engines.node).toBe(`>=${REQUIRED_NODE_MAJOR} <${REQUIRED_NODE_MAJOR + 1}`);
  });

  it('refuses an older Node in one line naming both versions and how to run the right one', () => {
    const problem = nodeVersionProblem('v20.20.2', '/usr/bin/node');
    expect(problem).toContain('needs Node.js 24');
    expect(problem).toContain('v20.20.2 (/usr/bin/node)');
    expect(problem).toContain('npm start');
    expect(problem).not.toContain('\n');
  });

  it('accepts the project Node', () => {
    expect(nodeVersionProblem('v24.21.0', '/x/node')).toBeNull();
  });
});
