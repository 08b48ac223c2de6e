import type { AccessRule } from '../../access/access-rules';
import type { Permission } from '../../access/permissions';
import type { Principal } from '../../access/principal';
import type { TokenFields } from '../token-fields';
import { defaultsFor } from './token-types';
import { patchDenial } from './patch-access';

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
  container: string,
  transform: AccessRule['transform'],
  permissions: string[],
  priority = 1,
): AccessRule => ({
  description: null,
  priority,
  container,
  transform,
  permissions,
});

const card: TokenFields = {
  type: 'card',
  data: { number: '4242424242424242' },
  mask: defaultsFor('card').mask,
  containers: ['/pci/high/'],
  metadata: null,
  searchIndexes: ['{{ data.number | last4 }}'],
  fingerprintExpression: '{{ data.number }}',
  deduplicateToken: null,
  expiresAt: null,
};

describe('patchDenial', () => {
  const updater = principal(['token:update', 'token:read']);
  const revealer = principal([], [rule('/', 'reveal', ['token:update', 'token:read'])]);
  const publicApp: Principal = { ...principal(['token:create', 'token:update']), applicationType: 'public' };

  it('lets anyone allowed to update change data, metadata, expiry and dedup, and drop expressions', () => {
    for (const p of [updater, revealer, publicApp]) {
      expect(
        patchDenial(p, card, { ...card, data: { number: '4000056655665556' }, metadata: { a: 'b' } }),
      ).toBeNull();
      expect(
        patchDenial(p, card, { ...card, mask: null, searchIndexes: null, deduplicateToken: true }),
      ).toBeNull();
      expect(patchDenial(p, card, { ...card, searchIndexes: [...(card.searchIndexes ?? [])] })).toBeNull();
      expect(
        patchDenial(p, card, { ...card, mask: JSON.parse(JSON.stringify(card.mask)) as unknown }),
      ).toBeNull();
    }
  });

  it('refuses a new mask, fingerprint expression or search index to an application that cannot reveal the data', () => {
    const changes: Partial<TokenFields>[] = [
      { mask: { number: '{{ data.number }}' } },
      { fingerprintExpression: '{{ data.number | slice: 0, 6 }}' },
      { searchIndexes: ['{% if data.number contains "42" %}x{% endif %}'] },
    ];
    for (const change of changes) {
      for (const p of [updater, publicApp]) {
        expect(patchDenial(p, card, { ...card, ...change })).toMatch(/reveals the token data/);
      }
      expect(patchDenial(revealer, card, { ...card, ...change })).toBeNull();
    }
  });

  it('refuses any change of expires_at, setting, moving or clearing it, without token:delete', () => {
    const expiring = { ...card, expiresAt: new Date('2099-01-01T00:00:00Z') };
    const later = { ...card, expiresAt: new Date('2099-02-01T00:00:00Z') };
    for (const [from, to] of [
      [card, expiring],
      [expiring, later],
      [expiring, card],
    ]) {
      expect(patchDenial(publicApp, from, to)).toMatch(/token:delete/);
      expect(patchDenial(updater, from, to)).toMatch(/token:delete/);
      expect(patchDenial(principal(['token:update', 'token:delete']), from, to)).toBeNull();
    }
    expect(
      patchDenial(publicApp, expiring, { ...expiring, expiresAt: new Date(expiring.expiresAt) }),
    ).toBeNull();
  });

  it('counts token:use reveal (the default of a rule-less application) as revealing', () => {
    expect(
      patchDenial(principal(['token:update', 'token:use']), card, { ...card, mask: '{{ data }}' }),
    ).toBeNull();
  });

  it('refuses a move to containers where the application sees more of the data', () => {
    const mover = principal(
      [],
      [
        rule('/pci/', 'mask', ['token:update'], 1),
        rule('/general/', 'reveal', ['token:read', 'token:update'], 2),
        rule('/shop/', 'redact', ['token:read', 'token:update'], 3),
      ],
    );
    expect(patchDenial(mover, card, { ...card, containers: ['/general/'] })).toMatch(/sees more/);
    // A redacted read shows no data, no more than no read at all
    expect(patchDenial(mover, card, { ...card, containers: ['/shop/'] })).toBeNull();
    expect(
      patchDenial(mover, { ...card, containers: ['/general/'] }, { ...card, containers: ['/pci/low/'] }),
    ).toBeNull();
    expect(patchDenial(updater, card, { ...card, containers: ['/general/'] })).toBeNull();
  });
});
