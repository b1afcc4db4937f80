// npm run build: the gateway as esbuild bundles, dist/gateway.mjs (the CLI) and dist/worker.mjs
// (a worker thread of `workers: N`), with no TypeScript loader at run time; and dist/gateway, a
// Node single executable application: the same code bundled as CommonJS (Node 24 runs an injected
// main script as CommonJS), the worker's bundle as an asset, RUNTIME_FLAGS as its execArgv and a
// V8 code cache, injected with postject into a copy of the pinned Node 24 binary that runs this
// script. Nothing is downloaded.
//
//   npm run build            ./dist/gateway --config gateway.yaml
//                            node dist/gateway.mjs --config gateway.yaml
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { build, type Plugin } from 'esbuild';
import { inject } from 'postject';
import { configSchema } from '../src/config/schema.ts';
import { CONFIG_AJV_OPTIONS } from '../src/config/validator.ts';
import { formatsAjv } from '../src/json/ajv.ts';
import { META_SCHEMA_ID } from '../src/json/meta-schema.ts';
import { WORKER_ASSET } from '../src/host/worker-threads.ts';

/**
 * V8 settings the gateway runs with: semi-spaces of 8 MB instead of V8's default, which grow to
 * 64 MB under load and keep their pages afterwards. With 8 MB a scavenge comes every few hundred
 * calls, after most of their garbage has died (4 MB promoted enough of it to cost 5 to 7 µs of
 * garbage collection per proxied call); the resident set after a million tokens stays near
 * 110 MB instead of 150 MB or more.
 */
export const RUNTIME_FLAGS = ['--max-semi-space-size=8'] as const;

const ROOT = path.join(import.meta.dirname, '..');
export const DIST = path.join(ROOT, 'dist');
export const BUNDLE = path.join(DIST, 'gateway.mjs');

/**
 * src/config/validator.ts as ajv's standalone code for the config schema, generated here: the
 * same validator, without compiling it at every start.
 */
const precompiledConfigValidator: Plugin = {
  name: 'precompiled-config-validator',
  setup(esbuild) {
    esbuild.onLoad({ filter: /[\\/]src[\\/]config[\\/]validator\.ts$/ }, () => {
      const ajv = new Ajv({ ...CONFIG_AJV_OPTIONS, code: { source: true, esm: true } });
      const code = eagerValidator(standalone.default(ajv, ajv.compile(configSchema)));
      return { contents: `${code}\nexport function configValidator() { return validate; }\n`, loader: 'js', resolveDir: ROOT };
    });
    // The same for src/json/meta-schema.ts: draft-07's meta-schema, compiled as the module's own ajv compiles it.
    esbuild.onLoad({ filter: /[\\/]src[\\/]json[\\/]meta-schema\.ts$/ }, () => {
      const ajv = formatsAjv(true, false, { source: true, esm: true });
      const code = standalone.default(ajv, ajv.getSchema(META_SCHEMA_ID)!);
      return {
        contents: `${code}\nexport const META_SCHEMA_ID = ${JSON.stringify(META_SCHEMA_ID)};\nexport function metaSchemaValidator() { return validate; }\n`,
        loader: 'js',
        resolveDir: ROOT,
      };
    });
  },
};

/**
 * ajv's standalone module with its one function turned into an expression in parentheses, which
 * V8 compiles with the script instead of at its first call: so the executable's code cache holds
 * its bytecode, and a start does not spend 30 ms compiling a megabyte of checks.
 */
function eagerValidator(code: string): string {
  const head = 'export const validate = validate10;';
  const declaration = 'function validate10(';
  if (!code.includes(head) || code.indexOf(declaration) !== code.lastIndexOf(declaration) || !code.trimEnd().endsWith('return errors === 0;}')) {
    throw new Error("scripts/build.ts: ajv's standalone code no longer has the shape eagerValidator expects");
  }
  return `${code.replace(head, '').replace(declaration, `const validate10 = (${declaration}`).trimEnd()});\n${head}\n`;
}

export async function buildBundles(outdir = DIST): Promise<void> {
  await build({
    entryPoints: { gateway: path.join(ROOT, 'cmd/gateway.ts'), worker: path.join(ROOT, 'src/host/worker.ts') },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // Some dependencies are CommonJS and call require() for Node's own modules.
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    legalComments: 'none',
    plugins: [precompiledConfigValidator],
    logLevel: 'warning',
  });
}

/** Where Node looks for the blob of a single executable (Node's SEA documentation). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Builds `outdir/gateway` and `outdir/gateway.sha256`; resolves to the executable's path. The
 * checksum names the executable by its path from the repository root (`dist/gateway`), so that
 * `sha256sum -c dist/gateway.sha256` checks it from there, where `npm run build` is typed.
 */
export async function buildExecutable(outdir = DIST): Promise<string> {
  const work = path.join(outdir, 'sea');
  mkdirSync(work, { recursive: true });
  await build({
    entryPoints: { gateway: path.join(ROOT, 'cmd/gateway.ts'), worker: path.join(ROOT, 'src/host/worker.ts') },
    outdir: work,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    // import.meta is read only outside the executable (src/host/worker-threads.ts asks isSea() first).
    logOverride: { 'empty-import-meta': 'silent' },
    minifyWhitespace: true,
    legalComments: 'none',
    plugins: [precompiledConfigValidator],
    logLevel: 'warning',
  });
  const blob = path.join(work, 'gateway.blob');
  const config = path.join(work, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: path.join(work, 'gateway.cjs'),
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      execArgv: RUNTIME_FLAGS,
      assets: { [WORKER_ASSET]: path.join(work, 'worker.cjs') },
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });
  const executable = path.join(outdir, 'gateway');
  copyFileSync(process.execPath, executable);
  chmodSync(executable, 0o755);
  await inject(executable, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  const digest = createHash('sha256').update(readFileSync(executable)).digest('hex');
  writeFileSync(path.join(outdir, 'gateway.sha256'), `${digest}  ${path.relative(ROOT, executable)}\n`);
  return executable;
}

if (import.meta.main) {
  await buildBundles();
  await buildExecutable();
}
