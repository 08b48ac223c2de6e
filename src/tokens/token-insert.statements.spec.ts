import { insertPart } from './token-insert.statements';
import { Token } from './token.entity';

function token(
  id: string,
  createdAt: Date,
  expiresAt: Date | null,
  createdBy: string | null = null,
  fields: Partial<Token> = {},
): { row: Token } {
  return {
    row: Object.assign(new Token(), {
      tenantId: '00000000-0000-4000-8000-000000000001',
      id,
      type: 'token',
      data: Buffer.from([1, 2, 3]),
      dataKeyVersion: 1,
      mask: null,
      fingerprint: 'f',
      fingerprintExpression: '{{ data }}',
      containers: ['/general/high/'],
      metadata: null,
      metadataCi: null,
      searchIndexes: null,
      deduplicateToken: null,
      expiresAt,
      createdBy,
      createdAt,
      ...fields,
    }),
  };
}

describe('insertPart', () => {
  it('sends the times of many tokens as JSON.stringify writes a Date, shared or not', () => {
    const shared = new Date('2026-11-27T21:00:00.123Z');
    const tokens = [
      token('a', shared, null),
      token('b', shared, new Date('2027-01-02T03:04:05.006Z')),
      token('c', new Date('2026-11-27T21:00:01.000Z'), null),
      token('d', shared, new Date(Number.NaN)),
    ];
    const [json] = insertPart(tokens).values as [string];
    const rows = JSON.parse(json) as { created_at: string; expires_at: string | null }[];
    expect(rows.map((r) => [r.created_at, r.expires_at])).toEqual([
      ['2026-11-27T21:00:00.123Z', null],
      ['2026-11-27T21:00:00.123Z', '2027-01-02T03:04:05.006Z'],
      ['2026-11-27T21:00:01.000Z', null],
      ['2026-11-27T21:00:00.123Z', null],
    ]);
  });

  it('sends the tenant, author and time once when every token shares them', () => {
    const at = new Date('2026-11-27T21:00:00.123Z');
    const author = '00000000-0000-4000-8000-0000000000aa';
    // A Date of the same time, not the same instance, is the same time.
    const part = insertPart([
      token('a', at, null, author),
      token('b', new Date(at.getTime()), null, author, { metadata: { k: 'v' }, metadataCi: { k: 'v' } }),
    ]);
    expect(part.name).toBe('tokens.insert-shared');
    const [json, tenant, createdBy, createdAt] = part.values as [string, string, string, string];
    expect([tenant, createdBy, createdAt]).toEqual([
      '00000000-0000-4000-8000-000000000001',
      author,
      '2026-11-27T21:00:00.123Z',
    ]);
    const rows = JSON.parse(json) as Record<string, unknown>[];
    expect(rows.map((r) => r.id)).toEqual(['a', 'b']);
    expect(rows.some((r) => 'tenant_id' in r || 'created_by' in r || 'created_at' in r)).toBe(false);
  });

  it('sends them in each row when the authors differ', () => {
    const at = new Date('2026-11-27T21:00:00.123Z');
    const part = insertPart([
      token('a', at, null, null),
      token('b', at, null, '00000000-0000-4000-8000-0000000000aa'),
    ]);
    expect(part.values).toHaveLength(1);
    const rows = JSON.parse(part.values[0] as string) as Record<string, unknown>[];
    expect(rows.map((r) => r.created_by)).toEqual([null, '00000000-0000-4000-8000-0000000000aa']);
  });

  it('sends only ids, ciphertexts and fingerprints per token when the rest is alike, the rest once', () => {
    const at = new Date('2026-11-27T21:00:00.123Z');
    const author = '00000000-0000-4000-8000-0000000000aa';
    const expires = new Date('2027-01-02T03:04:05.006Z');
    const fields = (): Partial<Token> => ({
      type: 'card',
      // Equal, not the same objects: each token of a /tokenize gets its own defaults.
      mask: { number: '{{ data.number | reveal_last: 4 }}' },
      containers: ['/pci/high/'],
      metadata: { k: 'V' },
      metadataCi: { k: 'v' },
      searchIndexes: ['{{ data.number }}'],
      deduplicateToken: false,
    });
    const part = insertPart([
      token('a', at, expires, author, { ...fields(), data: Buffer.from([1]), fingerprint: 'f1' }),
      token('b', at, new Date(expires.getTime()), author, {
        ...fields(),
        data: Buffer.from([2, 3]),
        fingerprint: 'f2',
      }),
    ]);
    expect(part.name).toBe('tokens.insert-uniform');
    expect(part.text).toMatch(/string_to_array/);
    expect(part.values).toEqual([
      'a\x1fb',
      'AQ==\x1fAgM=',
      'f1\x1ff2',
      '00000000-0000-4000-8000-000000000001',
      author,
      '2026-11-27T21:00:00.123Z',
      'card',
      1,
      '{"number":"{{ data.number | reveal_last: 4 }}"}',
      '{{ data }}',
      '["/pci/high/"]',
      '{"k":"V"}',
      '{"k":"v"}',
      '["{{ data.number }}"]',
      false,
      '2027-01-02T03:04:05.006Z',
    ]);
    expect(
      part.text
        .match(/\$\d+/g)
        ?.map((p) => Number(p.slice(1)))
        .sort((x, y) => x - y)
        .at(-1),
    ).toBe(16);
  });

  it.each<[string, Partial<Token>]>([
    ['type', { type: 'card' }],
    ['key version', { dataKeyVersion: 2 }],
    ['mask', { mask: { a: '{{ data }}' } }],
    ['fingerprint expression', { fingerprintExpression: '{{ data | upcase }}' }],
    ['containers', { containers: ['/general/high/', '/x/'] }],
    ['metadata', { metadata: { k: 'v' } }],
    ['case-folded metadata', { metadataCi: { k: 'v' } }],
    ['search indexes', { searchIndexes: ['{{ data }}'] }],
    ['deduplication', { deduplicateToken: true }],
    ['expiry', { expiresAt: new Date('2027-01-01T00:00:00.000Z') }],
  ])('sends each token as a JSON row when its %s differs', (_, differs) => {
    const at = new Date('2026-11-27T21:00:00.123Z');
    const part = insertPart([
      token('a', at, null),
      token('b', at, null, null, differs),
      token('c', at, null),
    ]);
    expect(part.name).toBe('tokens.insert-shared');
    const rows = JSON.parse(part.values[0] as string) as { id: string }[];
    expect(rows.map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
});
