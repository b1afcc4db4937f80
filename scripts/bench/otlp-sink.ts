// The benchmark's OTLP/HTTP receiver: takes every export the traced gateway posts, counts its
// spans (as a collector would decode them), and answers as a collector does. It runs on the load's
// core, so that decoding costs the gateway nothing; the count it prints at exit shows the spans came.
import { createServer } from 'node:http';

let spans = 0;
const server = createServer((req, res) => {
  // GET: how many spans came so far, for the bench to compare with the calls it made.
  if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ spans }));
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] };
    for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans += s.spans.length;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${spans} spans received\n`);
  process.exit(0);
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.send?.('ready'));
