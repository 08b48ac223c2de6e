import { ExpressAdapter } from '@nestjs/platform-express';
import express, { Response } from 'express';
import request from 'supertest';
import { fastJsonReplies } from './json-replies';

/** An Express app whose one route answers `body` through the adapter's reply, after `prepare`. */
function replying(body: unknown, status?: number, prepare: (res: Response) => void = () => undefined) {
  const app = express();
  const adapter = new ExpressAdapter(app);
  fastJsonReplies(adapter);
  app.get('/', (_req, res) => {
    prepare(res);
    adapter.reply(res, body, status);
  });
  return app;
}

describe('fastJsonReplies', () => {
  it('sends an object as JSON itself, with the status given', async () => {
    const res = await request(replying({ a: 'é' }, 201)).get('/');
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength('{"a":"é"}')));
    expect(res.text).toBe('{"a":"é"}');
  });

  it('leaves an answer whose Content-Type the handler chose to Nest, which keeps that type', async () => {
    const type = 'application/vnd.example+json; charset=utf-8';
    const res = await request(replying({ a: 1 }, 200, (r) => r.setHeader('Content-Type', type))).get('/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.text).toBe('{"a":1}');
  });

  it('leaves a value JSON cannot express to Nest', async () => {
    const res = await request(replying({ toJSON: () => undefined })).get('/');
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
  });
});
