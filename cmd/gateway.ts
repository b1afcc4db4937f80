// CLI entry: `gateway --config f` serves; `gateway admin …` and `gateway config …` manage.
import { quietOnClosedPipe } from '../src/cli/io.ts';
import { main } from '../src/cli/program.ts';

quietOnClosedPipe(process.stdout);

// No top-level await: the single executable runs this bundled as a CommonJS script.
void main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
}).then((code) => {
  process.exitCode = code;
});
