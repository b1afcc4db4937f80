// The baseline: a minimal undici pass-through proxy, the floor no Node proxy beats.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const [port = '0', upstream = ''] = process.argv.slice(2);
const pool = new Pool(upstream, { connections: 128, pipelining: 1, keepAliveTimeout: 60_000 });
const server = createServer(async (req, res) => {
  try {
    const answer = await pool.request({ method: req.method as 'GET', path: req.url ?? '/', headers: { 'x-forwarded-for': req.socket.remoteAddress ?? '' } });
    res.writeHead(answer.statusCode, answer.headers as Record<string, string>);
    answer.body.on('error', () => res.destroy());
    answer.body.pipe(res);
  } catch {
    if (!res.headersSent) res.writeHead(502).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
