import { AccessRule } from './access-rules';
import {
  atMostMask,
  containerScope,
  leastVisible,
  transformFor,
  uniformTransform,
  writeTransform,
} from './access';
import { Permission } from './permissions';
import { Principal } from './principal';

function principal(permissions: Permission[], rules: AccessRule[] = []): Principal {
  return {
    tenantId: 't',
    applicationId: 'a',
    applicationType: 'private',
    permissions: new Set(permissions),
    rules,
  };
}

const rule = (
  priority: number,
  container: string,
  transform: AccessRule['transform'],
  permissions: string[],
): AccessRule => ({
  description: null,
  priority,
  container,
  transform,
  permissions,
});

describe('uniformTransform', () => {
  const containers = [['/pci/'], ['/pci/high/'], ['/general/', '/pci/high/'], ['/other/x/']];
  const agrees = (p: Principal, expected: string | null): void => {
    expect(uniformTransform(p, 'token:read')).toBe(expected);
    if (expected !== null) {
      for (const c of containers) {
        expect(transformFor(p, 'token:read', c)).toBe(expected);
      }
    }
  };

  it('is the default of a rule-less application, null without the permission', () => {
    agrees(principal(['token:read']), 'mask');
    agrees(principal(['token:create']), null);
  });

  it('is the first rule by priority holding the permission when it names the root', () => {
    agrees(
      principal([], [rule(2, '/pci/', 'mask', ['token:read']), rule(1, '/', 'reveal', ['token:read'])]),
      'reveal',
    );
    // A rule before it in priority without the permission does not count.
    agrees(
      principal([], [rule(0, '/pci/', 'redact', ['token:create']), rule(1, '/', 'mask', ['token:read'])]),
      'mask',
    );
    // Equal priorities: the first listed wins, as in transformFor.
    agrees(
      principal([], [rule(1, '/', 'reveal', ['token:read']), rule(1, '/pci/', 'mask', ['token:read'])]),
      'reveal',
    );
  });

  it('is null when the transform depends on the containers', () => {
    agrees(
      principal([], [rule(1, '/pci/', 'mask', ['token:read']), rule(2, '/', 'reveal', ['token:read'])]),
      null,
    );
    agrees(principal([], [rule(1, '/pci/', 'reveal', ['token:read'])]), null);
    agrees(
      principal([], [rule(1, '/pci/', 'mask', ['token:read']), rule(1, '/', 'reveal', ['token:read'])]),
      null,
    );
  });
});

describe('transformFor', () => {
  it('gives rule-less applications the default transform of each held permission', () => {
    const p = principal(['token:read', 'token:use', 'token:create']);
    expect(transformFor(p, 'token:read', ['/pci/high/'])).toBe('mask');
    expect(transformFor(p, 'token:use', ['/pci/high/'])).toBe('reveal');
    expect(transformFor(p, 'token:create', ['/general/high/'])).toBe('mask');
    expect(transformFor(p, 'token:delete', ['/pci/high/'])).toBeNull();
  });

  it('takes the first rule by priority that holds the permission and covers a container', () => {
    const p = principal(
      [],
      [
        rule(1, '/pci/low/', 'reveal', ['token:read']),
        rule(2, '/pci/', 'mask', ['token:read']),
        rule(3, '/', 'redact', ['token:read', 'token:use']),
      ],
    );
    expect(transformFor(p, 'token:read', ['/pci/low/'])).toBe('reveal');
    expect(transformFor(p, 'token:read', ['/pci/high/'])).toBe('mask');
    expect(transformFor(p, 'token:read', ['/bank/high/'])).toBe('redact');
    expect(transformFor(p, 'token:use', ['/pci/high/'])).toBe('redact');
  });

  it('denies when no rule covers the container or holds the permission', () => {
    const p = principal(['token:read'], [rule(1, '/general/', 'reveal', ['token:read'])]);
    expect(transformFor(p, 'token:read', ['/pci/high/'])).toBeNull();
    expect(transformFor(p, 'token:update', ['/general/high/'])).toBeNull();
  });

  it('does not treat a partial segment as a prefix', () => {
    const p = principal([], [rule(1, '/pc/', 'reveal', ['token:read'])]);
    expect(transformFor(p, 'token:read', ['/pci/high/'])).toBeNull();
  });
});

describe('writeTransform', () => {
  const p = principal(
    [],
    [rule(1, '/general/', 'reveal', ['token:create']), rule(2, '/pci/', 'mask', ['token:create'])],
  );

  it('needs a rule for every container, not any one', () => {
    const generalOnly = principal([], [rule(1, '/general/', 'reveal', ['token:create'])]);
    expect(transformFor(generalOnly, 'token:create', ['/general/', '/pci/high/'])).toBe('reveal');
    expect(writeTransform(generalOnly, 'token:create', ['/general/', '/pci/high/'])).toBeNull();
    expect(writeTransform(generalOnly, 'token:create', ['/pci/high/', '/general/'])).toBeNull();
    expect(writeTransform(generalOnly, 'token:create', ['/general/'])).toBe('reveal');
  });

  it('gives the transform that shows least among the containers', () => {
    expect(writeTransform(p, 'token:create', ['/general/', '/pci/high/'])).toBe('mask');
    expect(writeTransform(principal(['token:create']), 'token:create', ['/a/', '/b/'])).toBe('mask');
    expect(leastVisible('reveal', 'redact')).toBe('redact');
  });
});

describe('containerScope', () => {
  it('is all for rule-less holders, none without the permission, else the rule containers', () => {
    expect(containerScope(principal(['token:read']), 'token:read')).toBe('all');
    expect(containerScope(principal([]), 'token:read')).toEqual([]);
    const p = principal(
      [],
      [rule(1, '/pci/', 'mask', ['token:read']), rule(2, '/bank/', 'mask', ['token:use'])],
    );
    expect(containerScope(p, 'token:read')).toEqual(['/pci/']);
  });
});

it('never reveals on write responses', () => {
  expect(atMostMask('reveal')).toBe('mask');
  expect(atMostMask('redact')).toBe('redact');
});
