import { PassThrough, Readable } from 'node:stream';
import { readAll } from './proxy-body';

const tooLarge = (): Error => new Error('too large');

describe('readAll', () => {
  it('reads every chunk to the end', async () => {
    await expect(
      readAll(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4, tooLarge),
    ).resolves.toEqual(Buffer.from('abcd'));
  });

  it('refuses a stream past the limit as soon as it is passed, and destroys it', async () => {
    const stream = new PassThrough();
    const read = readAll(stream, 3, tooLarge);
    stream.write('ab');
    stream.write('cd');
    await expect(read).rejects.toThrow('too large');
    expect(stream.destroyed).toBe(true);
  });

  it("fails with the stream's error, and a later error stays handled", async () => {
    const stream = new PassThrough();
    const read = readAll(stream, 10, tooLarge);
    stream.write('ab');
    stream.destroy(new Error('reset'));
    await expect(read).rejects.toThrow('reset');
    expect(() => stream.emit('error', new Error('again'))).not.toThrow();
  });

  it('fails when the stream closes before its end', async () => {
    const stream = new PassThrough();
    const read = readAll(stream, 10, tooLarge);
    stream.write('ab');
    stream.destroy();
    await expect(read).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('fails at once for a stream destroyed before the read, and reads nothing from one already ended', async () => {
    const gone = new PassThrough();
    gone.destroy();
    await expect(readAll(gone, 10, tooLarge)).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
    const ended = new PassThrough();
    ended.end();
    ended.resume();
    await new Promise((resolve) => ended.once('end', resolve));
    await expect(readAll(ended, 10, tooLarge)).resolves.toEqual(Buffer.alloc(0));
  });
});
