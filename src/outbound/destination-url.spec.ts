import { checkDestinationUrl, checkHostname } from './destination-url';

function reasonOf(url: string): string {
  const result = checkDestinationUrl(url);
  if (result.ok) {
    throw new Error(`accepted: ${url}`);
  }
  return result.reason;
}

const IP_LITERAL = 'the host must be a DNS name, not an IP address';

describe('checkDestinationUrl', () => {
  it.each([
    'http://api.example.com/',
    'HTTP://api.example.com/',
    'ftp://api.example.com/',
    'ws://api.example.com/',
    'wss://api.example.com/',
    'file:///etc/passwd',
    'gopher://api.example.com/',
    'data:text/plain,hi',
    'javascript:alert(1)',
    '//api.example.com/',
  ])('refuses the scheme of %s', (url) => {
    expect(reasonOf(url)).toMatch(/only https URLs are allowed|not valid/);
  });

  it.each([
    'https://127.0.0.1/',
    'https://127.0.0.1:8443/path',
    'https://127.0.0.1./',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://0x7f.1/',
    'https://0x7F.0x0.0x0.0x1/',
    'https://0177.0.0.1/',
    'https://0177.1/',
    'https://00000177.0.0.1/',
    'https://017700000001/',
    'https://127.1/',
    'https://127.0.1/',
    'https://%31%32%37.0.0.1/',
    'https://１２７.０.０.１/',
    'https://[::1]/',
    'https://[0:0:0:0:0:0:0:1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[::127.0.0.1]/',
    'https://[64:ff9b::127.0.0.1]/',
    'https://[fe80::1]/',
    'https://[fd00:ec2::254]/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0xa9.0xfe.0xa9.0xfe/',
    'https://2852039166/',
    'https://10.0.0.1/',
    'https://192.168.1.1/',
    'https://100.64.0.1/',
    'https://0.0.0.0/',
    'https://0/',
    'https://8.8.8.8/',
  ])('refuses the IP literal %s', (url) => {
    expect(reasonOf(url)).toBe(IP_LITERAL);
  });

  it.each([
    'https://localhost/',
    'https://LOCALHOST/',
    'https://LocalHost/',
    'https://localhost./',
    'https://LOCALHOST./',
    'https://localhost:443/',
    'https://%6c%6f%63%61%6c%68%6f%73%74/',
    'https://ｌｏｃａｌｈｏｓｔ/',
    'https://api.localhost/',
    'https://a.b.LOCALHOST./',
  ])('refuses localhost in the form %s', (url) => {
    expect(reasonOf(url)).toBe('localhost is not allowed');
  });

  it('lets the name localhost (only it) pass with allowLoopback, for a local mock', () => {
    const allowed = checkDestinationUrl('https://localhost:8443/pay', { allowLoopback: true });
    expect(allowed).toMatchObject({ ok: true, hostname: 'localhost', port: 8443 });
    expect(checkDestinationUrl('https://LOCALHOST./', { allowLoopback: true })).toMatchObject({ ok: true });
    expect(checkDestinationUrl('https://api.localhost/', { allowLoopback: true })).toEqual({
      ok: false,
      reason: 'localhost is not allowed',
    });
    expect(checkDestinationUrl('https://127.0.0.1/', { allowLoopback: true })).toMatchObject({ ok: false });
  });

  it.each([
    ['https://printer.local/', 'host names under .local are not allowed'],
    ['https://metadata.google.internal/', 'host names under .internal are not allowed'],
    ['https://router.home.arpa/', 'host names under .arpa are not allowed'],
    ['https://1.0.0.127.in-addr.arpa/', 'host names under .arpa are not allowed'],
    ['https://box.localdomain/', 'host names under .localdomain are not allowed'],
    ['https://hidden.onion/', 'host names under .onion are not allowed'],
    ['https://metadata/', 'the host must be a fully qualified domain name'],
    ['https://intranet./', 'the host must be a fully qualified domain name'],
  ])('refuses the local name %s', (url, reason) => {
    expect(reasonOf(url)).toBe(reason);
  });

  it.each([
    'https://a@127.0.0.1/',
    'https://a@api.example.com/',
    'https://user:pass@api.example.com/',
    'https://:pass@api.example.com/',
    'https://@api.example.com/',
    'https://api.example.com@127.0.0.1/',
    'https://127.0.0.1@api.example.com/',
    'https://api.example.com%40127.0.0.1/',
    'https://api.example.com\\@127.0.0.1/',
    'https:\\\\a@127.0.0.1/',
  ])('refuses user information in %s', (url) => {
    expect(reasonOf(url)).toMatch(/user information in the URL is not allowed|backslash|not valid/);
  });

  it.each([
    ['https://api.example.com\t/', 'the URL contains whitespace or control characters'],
    [' https://api.example.com/', 'the URL contains whitespace or control characters'],
    ['https://api.exa\nmple.com/', 'the URL contains whitespace or control characters'],
    ['https://api.example.com/\u0000', 'the URL contains whitespace or control characters'],
    ['https://api.example.com:0/', 'the port is not valid'],
    ['https://api.example.com:65536/', 'the URL is not valid'],
    ['https://', 'the URL is not valid'],
    ['not a url', 'the URL contains whitespace or control characters'],
    ['https:///path', 'the host must be a fully qualified domain name'],
    ['https://-bad.example.com/', 'the host is not a valid DNS name'],
    ['https://bad..example.com/', 'the host is not a valid DNS name'],
    [`https://${'a'.repeat(64)}.example.com/`, 'the host is not a valid DNS name'],
    [`https://api.example.com/${'a'.repeat(9000)}`, 'the URL is too long'],
  ])('refuses the malformed %j', (url, reason) => {
    expect(reasonOf(url)).toBe(reason);
  });

  it('accepts a public https URL and normalizes the host name', () => {
    const result = checkDestinationUrl('https://API.Example.com./v1/charges?x=1');
    expect(result).toEqual(expect.objectContaining({ ok: true, hostname: 'api.example.com', port: 443 }));
  });

  it.each([
    ['https://api.example.com', 'api.example.com', 443],
    ['https://api.example.com:8443/x', 'api.example.com', 8443],
    ['https://xn--bcher-kva.example/', 'xn--bcher-kva.example', 443],
    ['https://bücher.example/', 'xn--bcher-kva.example', 443],
    ['https://vault-proxy.test:9443/', 'vault-proxy.test', 9443],
    ['https://127.0.0.1.nip.io/', '127.0.0.1.nip.io', 443],
    ['https://_dmarc.example.com/', '_dmarc.example.com', 443],
  ])('accepts %s (resolved addresses are checked later)', (url, hostname, port) => {
    expect(checkDestinationUrl(url)).toEqual(expect.objectContaining({ ok: true, hostname, port }));
  });

  it('accepts a URL object', () => {
    expect(checkDestinationUrl(new URL('https://api.example.com/')).ok).toBe(true);
    expect(checkDestinationUrl(new URL('https://a@api.example.com/')).ok).toBe(false);
  });
});

describe('checkHostname', () => {
  it.each(['127.0.0.1', '::1', '[::1]', '0x7f.1', '127.1', '2130706433', 'foo.0x7f', 'foo.123'])(
    'refuses the IP-like host %s even outside a URL',
    (host) => {
      expect(checkHostname(host)).toEqual({ ok: false, reason: IP_LITERAL });
    },
  );

  it.each(['', '.', 'localhost', 'Localhost', 'x.localhost.', 'single', 'a b.example.com'])(
    'refuses %j',
    (host) => {
      expect(checkHostname(host).ok).toBe(false);
    },
  );

  it('strips one trailing dot', () => {
    expect(checkHostname('api.example.com.')).toEqual({ ok: true, hostname: 'api.example.com' });
  });
});

describe('checkDestinationUrl given back the URL it passed', () => {
  function passed(url: string, allowLoopback = false): URL {
    const check = checkDestinationUrl(url, { allowLoopback });
    if (!check.ok) {
      throw new Error(`refused: ${url}`);
    }
    return check.url;
  }

  it('answers as before, for the same URL object, when it is unchanged', () => {
    const url = passed('https://api.example.com:8443/v1?a=1');
    const again = checkDestinationUrl(url);
    expect(again).toEqual({ ok: true, url, hostname: 'api.example.com', port: 8443 });
    expect(checkDestinationUrl(url)).toBe(again);
  });

  it('checks it again once it was changed', () => {
    const url = passed('https://api.example.com/');
    url.hostname = '169.254.169.254';
    expect(checkDestinationUrl(url)).toEqual({ ok: false, reason: IP_LITERAL });
    const moved = passed('https://api.example.com/');
    moved.port = '8443';
    expect(checkDestinationUrl(moved)).toMatchObject({ ok: true, port: 8443 });
  });

  it('checks it again under other options', () => {
    const url = passed('https://localhost/', true);
    expect(checkDestinationUrl(url, { allowLoopback: true })).toMatchObject({ ok: true });
    expect(checkDestinationUrl(url)).toMatchObject({ ok: false });
  });

  it('checks a URL again that reads back other than the text that passed', () => {
    const check = checkDestinationUrl('https://API.example.com');
    expect(check).toMatchObject({ ok: true, hostname: 'api.example.com' });
    const url = (check as { url: URL }).url;
    const again = checkDestinationUrl(url);
    expect(again).toEqual(check);
    expect(again).not.toBe(check);
  });
});

describe('checkDestinationUrl given a text that passed before', () => {
  it('answers with the check it made, under the same options only', () => {
    const first = checkDestinationUrl('https://api.example.com/v1/charge?x=1');
    expect(first).toMatchObject({ ok: true, hostname: 'api.example.com', port: 443 });
    expect(checkDestinationUrl('https://api.example.com/v1/charge?x=1')).toBe(first);
    const local = checkDestinationUrl('https://localhost/v1', { allowLoopback: true });
    expect(local).toMatchObject({ ok: true });
    expect(checkDestinationUrl('https://localhost/v1')).toMatchObject({ ok: false });
    expect(checkDestinationUrl('https://localhost/v1', { allowLoopback: true })).toBe(local);
  });

  it('checks it again once the URL it gave back was changed', () => {
    const first = checkDestinationUrl('https://api.example.com/v2');
    if (!first.ok) {
      throw new Error('refused');
    }
    first.url.hostname = '169.254.169.254';
    const again = checkDestinationUrl('https://api.example.com/v2');
    expect(again).not.toBe(first);
    expect(again).toMatchObject({ ok: true, hostname: 'api.example.com' });
    expect((again as { url: URL }).url.href).toBe('https://api.example.com/v2');
  });

  it('keeps no refusal', () => {
    const refused = checkDestinationUrl('https://10.0.0.1/');
    expect(refused).toEqual({ ok: false, reason: IP_LITERAL });
    expect(checkDestinationUrl('https://10.0.0.1/')).not.toBe(refused);
  });
});
