import { insertPart } from './token-insert-sql';
import { Token } from './token.entity';

function token(id: string, createdAt: Date, expiresAt: Date | null): { row: Token } {
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
      createdBy: null,
      createdAt,
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
});
