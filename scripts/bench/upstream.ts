// The benchmark's upstream: a small JSON answer, as fast as Node serves it. A request with a body
// is answered once the body is read, as a real upstream would: the gateway's sending of the body
// is part of what the openapi pair measures.
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ message: 'hello from the upstream', items: [1, 2, 3] }));
const server = createServer((req, res) => {
  const answer = () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) answer();
  else req.on('end', answer).resume();
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.send?.('ready'));
