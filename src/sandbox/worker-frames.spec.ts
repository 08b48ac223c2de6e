import { encodeFrame, FrameReader } from './worker-frames';

function reader(limits = { headerBytes: 1024, bodyBytes: 1024 }) {
  const frames: [unknown, string][] = [];
  let violations = 0;
  const r = new FrameReader(
    limits,
    (header, body) => frames.push([header, body.toString('utf8')]),
    () => violations++,
  );
  return { r, frames, violations: () => violations };
}

describe('worker frames', () => {
  it('reassembles frames split and joined at any byte', () => {
    const bytes = Buffer.concat([
      encodeFrame({ type: 'done', id: 1 }, '{"ok":true,"value":"é"}'),
      encodeFrame({ type: 'ready' }),
    ]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { r, frames, violations } = reader();
      r.push(bytes.subarray(0, cut));
      r.push(bytes.subarray(cut));
      expect(frames).toEqual([
        [{ type: 'done', id: 1 }, '{"ok":true,"value":"é"}'],
        [{ type: 'ready' }, ''],
      ]);
      expect(violations()).toBe(0);
    }
  });

  it('refuses a frame over the limits from its lengths alone, before the rest arrives', () => {
    const { r, frames, violations } = reader({ headerBytes: 64, bodyBytes: 100 });
    const head = Buffer.alloc(8);
    head.writeUInt32BE(2, 0);
    head.writeUInt32BE(15 * 1024 * 1024, 4);
    r.push(head);
    expect(violations()).toBe(1);
    r.push(encodeFrame({ type: 'ready' }));
    expect(frames).toEqual([]);
  });

  it('refuses an unreadable header', () => {
    const { r, violations } = reader();
    const head = Buffer.alloc(8);
    head.writeUInt32BE(3, 0);
    r.push(Buffer.concat([head, Buffer.from('{{{')]));
    expect(violations()).toBe(1);
  });
});
