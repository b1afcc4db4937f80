// The benchmark's upstream: a small JSON answer, as fast as Node serves it.
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ message: 'hello from the upstream', items: [1, 2, 3] }));
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.send?.('ready'));
