// CLI entry: `gateway --config f` serves; `gateway admin …` and `gateway config …` manage.
import { main } from '../src/cli/program.ts';

const code = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
});
process.exitCode = code;
