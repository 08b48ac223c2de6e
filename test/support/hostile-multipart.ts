import fc from 'fast-check';

const BOUNDARY = 'hostile-boundary-7f3a';

interface Part {
  name: string;
  filename: string | undefined;
  type: string | undefined;
  data: Buffer;
}

function framed(parts: Part[], ending: 'closed' | 'open' | 'cut'): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition =
      `form-data; name="${part.name}"` + (part.filename === undefined ? '' : `; filename="${part.filename}"`);
    pieces.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n` +
          (part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`) +
          '\r\n',
      ),
      part.data,
      Buffer.from('\r\n'),
    );
  }
  if (ending === 'closed') {
    pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  }
  const body = Buffer.concat(pieces);
  return ending === 'cut' ? body.subarray(0, Math.floor(body.length / 2)) : body;
}

/**
 * Hostile multipart bodies for an upload route (a `document` file part and a JSON `request` part): odd and
 * repeated part names, hostile file names and part types, hostile or deeply nested request JSON, bodies
 * without their closing boundary or cut in half, and Content-Type headers with a wrong or no boundary.
 */
export function hostileMultipart(
  hostile: fc.Arbitrary<string>,
): fc.Arbitrary<{ type: string; body: Buffer }> {
  const text = hostile.map((s) => Buffer.from(s));
  const requestJson = fc.oneof(
    hostile,
    hostile.map((v) => JSON.stringify({ metadata: { note: v } })),
    hostile.map((v) => JSON.stringify({ metadata: { [v]: 'x' }, [v]: v })),
    fc.constant('['.repeat(10_000)),
    fc.constant('{"metadata": {"__proto__": {"polluted": "yes"}}}'),
    fc.constant(
      JSON.stringify({ metadata: Object.fromEntries([...Array(500).keys()].map((i) => [`k${i}`, 'v'])) }),
    ),
  );
  const part: fc.Arbitrary<Part> = fc.oneof(
    fc.record({
      name: fc.constant('document'),
      filename: fc.option(
        hostile.map((s) => s.replace(/[\r\n"]/g, '_')),
        { nil: undefined },
      ),
      type: fc.option(fc.constantFrom('application/pdf', 'text/html', 'application/octet-stream', 'x/'), {
        nil: undefined,
      }),
      data: fc.oneof(
        text,
        fc.uint8Array({ maxLength: 4096 }).map((a) => Buffer.from(a)),
      ),
    }),
    fc.record({
      name: fc.constant('request'),
      filename: fc.constant(undefined),
      type: fc.constant(undefined),
      data: requestJson.map((s) => Buffer.from(s)),
    }),
    fc.record({
      name: hostile.map((s) => s.replace(/[\r\n"]/g, '_')),
      filename: fc.option(fc.constant('x.bin'), { nil: undefined }),
      type: fc.constant(undefined),
      data: text,
    }),
  );
  return fc
    .tuple(
      fc.array(part, { maxLength: 3 }),
      fc.constantFrom<'closed' | 'open' | 'cut'>('closed', 'closed', 'open', 'cut'),
      fc.constantFrom(
        `multipart/form-data; boundary=${BOUNDARY}`,
        `multipart/form-data; boundary=${BOUNDARY}`,
        'multipart/form-data',
        'multipart/form-data; boundary=other',
      ),
    )
    .map(([parts, ending, type]) => ({ type, body: framed(parts, ending) }));
}
