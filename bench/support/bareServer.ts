// Baselines for the benchmarks, answering fixed bytes (200, or 304 when If-None-Match matches):
// - `node`: a bare node:http server, the least work any HTTP server on this machine can do for that answer;
// - `koa`: a one-middleware Koa app, the floor of the framework the web role is built on.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import Koa from 'koa';
import { bareAnswer } from './bareAnswer.ts';

const [bodyFile, etag, portText, kind = 'node'] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const port = Number(portText);

const server =
  kind === 'koa'
    ? createServer(
        new Koa()
          .use((ctx) => {
            ctx.set('ETag', etag);
            ctx.set('Cache-Control', 'no-store');
            if (ctx.get('if-none-match') === etag) {
              ctx.status = 304;
              return;
            }
            ctx.type = 'application/json; charset=utf-8';
            ctx.body = body;
          })
          .callback(),
      )
    : createServer((req, res) => bareAnswer(req, res, body, etag));
server.listen(port, () => process.send?.('ready'));
