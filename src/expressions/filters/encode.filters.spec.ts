import { ExpressionEngine } from '../expression-engine';

describe('encoding filters', () => {
  const engine = new ExpressionEngine();
  const render = (template: string, v: unknown): unknown => engine.render(template, { v });
  const fox = 'The quick brown fox jumps over the lazy dog';

  it('computes hex HMACs with sha256 and sha512', () => {
    expect(render("{{ v | hmac: 'sha256', 'key' }}", fox)).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
    expect(render("{{ v | hmac: 'sha512', 'key' }}", fox)).toMatch(/^[0-9a-f]{128}$/);
  });

  it('rejects other algorithms and empty keys', () => {
    expect(() => render("{{ v | hmac: 'md5', 'key' }}", fox)).toThrow(
      'hmac: the algorithm must be sha256 or sha512',
    );
    expect(() => render("{{ v | hmac: 'sha256', '' }}", fox)).toThrow(/non-empty string/);
    expect(() => render("{{ v | hmac: 'sha256' }}", fox)).toThrow(/non-empty string/);
  });

  it('encodes UTF-8 as base64 and base16', () => {
    expect(render('{{ v | to_base64 }}', 'héllo')).toBe('aMOpbGxv');
    expect(render('{{ v | to_base16 }}', 'hé')).toBe('68c3a9');
    expect(render('{{ v | to_base16 }}', null)).toBeNull();
  });
});
