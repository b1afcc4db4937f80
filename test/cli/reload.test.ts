// `gateway reload` against an in-process gateway: it says `reloaded`, and when the file reads
// variables, that the gateway substituted them with its own environment, not the command's.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { main } from '../../src/cli/program.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { freePort } from '../../src/http/listener.ts';
import { createLogger } from '../../src/log.ts';
import { startGateway } from '../../src/host/index.ts';
import { configYaml, tempDir } from '../helpers.ts';

/** Runs `gateway reload` on `file` with `env`: its exit code and what it wrote. */
async function reload(file: string, env: Record<string, string>): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['reload', '--config', file], { out: (t) => out.push(t), err: (t) => err.push(t), env });
  return { code, out, err };
}

describe('gateway reload', () => {
  test('a file that reads variables: reloaded, and a note that the gateway read it with its own environment; a file that reads none: reloaded alone', async () => {
    const dir = tempDir();
    const port = await freePort('127.0.0.1');
    const file = path.join(dir.dir, 'gateway.yaml');
    const withVariables = configYaml().replace('admin:\n  port: 0', `admin:\n  port: \${T_ADMIN_PORT:-${port}}`).replace('log:\n  level: info', 'log:\n  level: ${T_LEVEL:-info}\n# ${T_IN_A_COMMENT}');
    assert.ok(withVariables.includes('${T_ADMIN_PORT:-') && withVariables.includes('${T_LEVEL:-info}'));
    writeFileSync(file, withVariables);
    // The gateway reads the file again with its own environment (this process's), where neither variable is set.
    const gateway = await startGateway({ config: loadConfigFile(file, { env: {} }), logger: createLogger('silent') });
    try {
      assert.deepEqual(await reload(file, { T_LEVEL: 'debug' }), {
        code: 0,
        out: [`reloaded ${file}`],
        err: ["note: the gateway read the file with its own environment, not this command's: changes to T_ADMIN_PORT, T_LEVEL made here do not reach it (restart the gateway to change them)"],
      });
      writeFileSync(file, withVariables.replace(`\${T_ADMIN_PORT:-${port}}`, String(port)).replace('${T_LEVEL:-info}', 'info'));
      assert.deepEqual(await reload(file, {}), { code: 0, out: [`reloaded ${file}`], err: [] });
    } finally {
      await gateway.close();
      dir.remove();
    }
  });
});
