import { loadConfig } from './app-config';

describe('CORS_ORIGINS', () => {
  it('is any origin unless set', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: ' * ' }).corsOrigins).toBe('*');
  });

  it('lists exact origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://127.0.0.1:8080' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://127.0.0.1:8080',
    ]);
  });

  it.each([
    'https://a.example.com/',
    'https://a.example.com/pay',
    'a.example.com',
    'ftp://a.example.com',
    '*, https://a.example.com',
    'https://A.example.com',
  ])('refuses %s', (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS must be/);
  });
});
