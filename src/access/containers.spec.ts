import { containerCovers, normalizeContainer, validateContainers } from './containers';

describe('normalizeContainer', () => {
  it.each([
    ['/general/high/', '/general/high/'],
    ['/pci/', '/pci/'],
    ['/PCI/High/', '/pci/high/'],
    ['/a_b-C9/x/', '/a_b-c9/x/'],
    ['/a/', '/a/'],
  ])('accepts %s as %s', (input, expected) => {
    expect(normalizeContainer(input)).toBe(expected);
  });

  it.each([
    '/a',
    'a/',
    '//',
    '/',
    '',
    '/a b/',
    '/a//b/',
    'a',
    '/a/b',
    '/a.b/',
    '/ä/',
    '/a/\n',
    ' /a/',
    '/a/ ',
  ])('rejects %p', (input) => {
    expect(normalizeContainer(input)).toBeNull();
  });
});

describe('validateContainers', () => {
  it('accepts a list of valid containers', () => {
    expect(validateContainers(['/pci/high/', '/general/'])).toEqual({});
  });

  it('accepts exactly 100 containers and rejects 101', () => {
    const many = Array.from({ length: 101 }, (_, i) => `/c${i}/`);
    expect(validateContainers(many.slice(0, 100))).toEqual({});
    expect(validateContainers(many)).toEqual({ containers: ['must contain at most 100 containers'] });
  });

  it.each([[null], [undefined], ['/pci/'], [{ 0: '/pci/' }]])('requires an array (%p)', (value) => {
    expect(validateContainers(value)).toEqual({ containers: ['must be an array'] });
  });

  it('requires at least one container', () => {
    expect(validateContainers([])).toEqual({ containers: ['must contain at least one container'] });
  });

  it('reports each bad item by index without echoing it', () => {
    const errors = validateContainers(['/ok/', '/bad path/', 7, '/OK/', '/ok/']);
    expect(errors).toEqual({
      'containers[1]': ['must look like /segment/.../ with letters, digits, _ or - in each segment'],
      'containers[2]': ['must be a string'],
      'containers[3]': ['duplicates another container (compared case-insensitively)'],
      'containers[4]': ['duplicates another container (compared case-insensitively)'],
    });
    for (const message of Object.values(errors).flat()) {
      expect(message).not.toContain('bad path');
      expect(message).not.toMatch(/\/ok\//i);
    }
  });

  it('uses the given path', () => {
    expect(validateContainers(['x'], 'tokens[0].containers')).toEqual({
      'tokens[0].containers[0]': [
        'must look like /segment/.../ with letters, digits, _ or - in each segment',
      ],
    });
  });
});

describe('containerCovers', () => {
  it.each([
    ['/pci/', '/pci/high/', true],
    ['/pci/', '/pci/', true],
    ['/PCI/', '/pci/High/', true],
    ['/pci/high/', '/PCI/HIGH/', true],
    ['/pc/', '/pci/', false],
    ['/pci/high/', '/pci/', false],
    ['/pci/high/', '/pci/higher/', false],
    ['/general/', '/pci/high/', false],
    ['/pci', '/pci/high/', false],
    ['', '/pci/high/', false],
    ['/pci/', 'not a path', false],
  ])('%s covers %s: %s', (rule, token, expected) => {
    expect(containerCovers(rule, token)).toBe(expected);
  });
});
