import { transformFor } from '../../src/access/access';
import { Principal } from '../../src/access/principal';
import { TokenDto } from '../../src/tokens/dto/token.dto';
import { presentToken } from '../../src/tokens/token-presenter';
import { Token } from '../../src/tokens/token.entity';
import { TokensRepository } from '../../src/tokens/tokens.repository';
import { TokenPresentation } from '../../src/tokens/token-presentation.service';
import { TestContext } from '../support/test-app';
import { bankData, cardData, rule, tokenApp } from '../support/token-factory';

/**
 * A list page opens its rows with the tenant's keys looked up once (presentRows); each row must show exactly
 * what the one-token path (present) shows it, byte for byte, whatever its transform, mask or ciphertext.
 */
describe('a list page presented at once', () => {
  let ctx: TestContext;
  let tenantId: string;
  let principal: Principal;
  let rows: Token[];

  beforeAll(async () => {
    ctx = await TestContext.create();
    const tenant = await ctx.newTenant();
    tenantId = tenant.tenantId;
    const permissions = ['token:create', 'token:read'] as const;
    const app = await tokenApp(
      ctx,
      tenant,
      [
        rule('/a/', 'reveal', [...permissions]),
        rule('/b/', 'mask', [...permissions]),
        rule('/c/', 'redact', [...permissions]),
      ],
      [...permissions],
    );
    principal = await ctx.principalOf(app);
    const metadata = { set: 'page' };
    const bodies: object[] = [
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
      await app.api.create({ ...body, metadata }).expect(201);
    }
    const [listed] = await ctx
      .get(TokensRepository)
      .list(tenantId, { metadata, scope: 'all', offset: 0, limit: 50 }, new Date());
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
  afterAll(() => ctx.close());

  /** What the page showed before: each row through present(), an unreadable one redacted. */
  function oneByOne(): Promise<TokenDto[]> {
    const service = ctx.get(TokenPresentation);
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
    const page = await ctx.get(TokenPresentation).presentRows(principal, 'token:read', rows);
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
