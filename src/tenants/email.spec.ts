import { canonicalEmail, emailRefusal, isCanonicalEmail } from './email';

describe('canonicalEmail and emailRefusal', () => {
  it.each([
    ['vic@ban\u212A.example', 'vic@bank.example'],
    ['  Vic@Bank.EXAMPLE ', 'vic@bank.example'],
    ['\uFF56\uFF49\uFF43@bank.example', 'vic@bank.example'],
    ['vic@XN--BNK-QLA.example', 'vic@xn--bnk-qla.example'],
  ])('folds %p to %p, an accepted address', (given, canonical) => {
    expect(canonicalEmail(given)).toBe(canonical);
    expect(emailRefusal(canonical)).toBeNull();
    expect(isCanonicalEmail(canonical)).toBe(true);
  });

  it.each([
    'v\u0456c@bank.example',
    'vic@b\u0430nk.example',
    'v\u00EDc@bank.example',
    'vic@xn--bnk-6cd.example',
    'vic\uFE6B@bank.example',
    'vic@bank',
    'vic@xn--zz.example',
  ])('refuses %p', (given) => {
    expect(emailRefusal(canonicalEmail(given))).not.toBeNull();
  });

  it('is idempotent and never calls a non-canonical stored form canonical', () => {
    expect(canonicalEmail(canonicalEmail('VIC@BAN\u212A.EXAMPLE'))).toBe('vic@bank.example');
    expect(isCanonicalEmail('VIC@bank.example')).toBe(false);
    expect(isCanonicalEmail('vic@ban\u212A.example')).toBe(false);
  });
});
