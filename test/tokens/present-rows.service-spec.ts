import { transformFor } from '../../src/access/access';
import { Principal } from '../../src/access/principal';
import { TokenDto } from '../../src/tokens/dto/token.dto';
import { presentToken } from '../../src/tokens/token-presenter';
import { Token } from '../../src/tokens/token.entity';
import { bankData, cardData, rule } from '../support/token-factory';
import { openTokenServices, TokenServices } from '../support/token-services';

/**
 * A list page opens its rows with the tenant's keys looked up once (presentRows); each row must show exactly
 * what the one-token path (present) shows it, byte for byte, whatever its transform, mask or ciphertext.
 */
describe('a list page presented at once', () => {
  let s: TokenServices;
  let principal: Principal;
  let rows: Token[];

  beforeAll(async () => {
    s = await openTokenServices();
    const tenantId = await s.newTenant();
    const permissions = ['token:create', 'token:read'] as const;
    principal = s.principal(
      tenantId,
      [
        rule('/a/', 'reveal', [...permissions]),
        rule('/b/', 'mask', [...permissions]),
        rule('/c/', 'redact', [...permissions]),
      ],
      [...permissions],
    );
    const metadata = { set: 'page' };
    const bodies: Record<string, unknown>[] = [
      { type: 'card', data: cardData(), containers: ['/a/'] },
      { type: 'card', data: cardData({ number: '4000056655665556' }), containers: ['/b/'] },
      { type: 'bank', data: bankData(), containers: ['/b/'] },
      { type: 'token', data: 'plain text', containers: ['/c/'] },
      { type: 'token', data: 'ünïcødé 😀 "quoted" \\ </script>', containers: ['/a/'] },
      { type: 'token', data: 0, containers: ['/a/'] },
      { type: 'token', data: false, containers: ['/b/'] },
      { type: 'token', data: '', containers: ['/a/'] },
      {
        type: 'token',
        data: { name: 'Jane Doe', tags: [1, null] },
        containers: ['/a/'],
        mask: '{{ data.name | reveal_last: 3 }}',
      },
      {
        type: 'token',
        data: { name: 'Jane' },
        containers: ['/b/'],
        mask: { first: '{{ data.name | slice: 0, 1 }}' },
      },
      { type: 'token', data: 'x', containers: ['/b/'], mask: "{{ data | json: '$.no.such.path' }}" },
      { type: 'token', data: 'two containers', containers: ['/a/', '/c/'] },
    ];
    for (const body of bodies) {
      await s.tokens.create(principal, { ...body, metadata });
    }
    const [listed] = await s.repository.list(
      tenantId,
      { metadata, scope: 'all', offset: 0, limit: 50 },
      new Date(),
    );
    const sealed = listed[0].data as Buffer;
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    const unknownVersion = Buffer.from(sealed);
    unknownVersion.writeUInt32BE(7, 1);
    rows = [
      ...listed,
      { ...listed[0], id: 'tampered', data: tampered },
      { ...listed[0], id: 'unknown-version', data: unknownVersion },
      { ...listed[0], id: 'no-blob', data: Buffer.from('short') },
      { ...listed[0], id: 'purged', data: null },
    ];
  });
  afterAll(() => s.close());

  /** What the page showed before: each row through present(), an unreadable one redacted. */
  function oneByOne(): Promise<TokenDto[]> {
    const service = s.presentation;
    return Promise.all(
      rows.map((row) =>
        service
          .present(row, undefined, transformFor(principal, 'token:read', row.containers) ?? 'redact')
          .catch(() => presentToken(row, { transform: 'redact' })),
      ),
    );
  }

  it('shows every row as present() shows it, byte for byte', async () => {
    const expected = await oneByOne();
    const page = await s.presentation.presentRows(principal, 'token:read', rows);
    expect(JSON.stringify(page)).toBe(JSON.stringify(expected));
  });

  it('covers revealed, masked, redacted and unreadable rows', async () => {
    const expected = await oneByOne();
    const shown = (dto: TokenDto): string =>
      dto.data === undefined ? 'none' : dto.mask === undefined ? 'data' : 'data+mask';
    expect(new Set(expected.map(shown))).toEqual(new Set(['none', 'data', 'data+mask']));
    expect(expected.filter((dto) => dto.mask === null)).toHaveLength(1);
    const unreadable = expected.filter((dto) =>
      ['tampered', 'unknown-version', 'no-blob', 'purged'].includes(dto.id),
    );
    expect(unreadable.map((dto) => [dto.id, shown(dto)])).toEqual([
      ['tampered', 'none'],
      ['unknown-version', 'none'],
      ['no-blob', 'none'],
      ['purged', 'none'],
    ]);
  });
});
