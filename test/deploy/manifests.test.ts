// The deployment files (Dockerfile, docs/deploy/) cannot run here: no Docker daemon, no cluster,
// no systemd as PID 1. What keeps them from drifting is that their ports, paths and commands are
// read from them and compared with each other, with gateway.example.yaml and with CI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ADMIN_PATHS } from '../../src/admin-listener/server.ts';
import { loadConfigFile } from '../../src/config/load.ts';
import { tempDir } from '../helpers.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

// ---- Dockerfile

interface Stage {
  from: string;
  name: string | undefined;
  instructions: { keyword: string; args: string }[];
}

/** The stages of a Dockerfile: comment lines dropped, continued lines joined. */
function dockerStages(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text
    .split('\n')
    .filter((l) => !/^\s*#/.test(l))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n');
  for (const line of lines) {
    const m = /^\s*([A-Za-z]+)\s+(.*\S)\s*$/.exec(line);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    const args = m[2]!.replace(/\s+/g, ' ');
    if (keyword === 'FROM') {
      const [, from, name] = /^(\S+)(?: AS (\S+))?$/i.exec(args) ?? assert.fail(`FROM ${args}`);
      stages.push({ from: from!, name, instructions: [] });
    } else {
      (stages.at(-1) ?? assert.fail(`${keyword} before FROM`)).instructions.push({ keyword, args });
    }
  }
  return stages;
}

const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
function only(stage: Stage, keyword: string): string {
  const found = all(stage, keyword);
  assert.equal(found.length, 1, `one ${keyword}`);
  return found[0]!;
}
/** `--name=value` options before the rest of an instruction's arguments. */
function splitOptions(args: string): { options: Record<string, string>; rest: string } {
  const out: Record<string, string> = {};
  let rest = args;
  for (let m = /^--([a-z-]+)=(\S+) /.exec(rest); m; m = /^--([a-z-]+)=(\S+) /.exec(rest)) {
    out[m[1]!] = m[2]!;
    rest = rest.slice(m[0].length);
  }
  return { options: out, rest };
}
function execForm(args: string): string[] {
  assert.match(args, /^\[/, `exec form (a JSON array), so that no shell is needed: ${args}`);
  return JSON.parse(args) as string[];
}
/** What a stop does after the drain (save counts and usage, close the store) gets this long before SIGKILL. */
const AFTER_DRAIN_S = 5;
const seconds = (duration: string) => Number(/^(\d+)s$/.exec(duration)?.[1] ?? assert.fail(`seconds: ${duration}`));

const stages = dockerStages(read('Dockerfile'));
const [build, image] = stages as [Stage, Stage];
const imageEnv = Object.fromEntries(all(image, 'ENV').flatMap((args) => args.split(' ').map((pair) => /^([A-Z_]+)=(\S+)$/.exec(pair)?.slice(1, 3) ?? assert.fail(`ENV ${pair}`)))) as Record<
  string,
  string
>;
const entrypoint = execForm(only(image, 'ENTRYPOINT'));
const cmd = execForm(only(image, 'CMD'));
const volume = only(image, 'VOLUME');
const user = only(image, 'USER');
const installed = entrypoint[0]!;
/** Where the config is, as CMD names it. */
const configPath = cmd[cmd.indexOf('--config') + 1]!;
const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string>; devDependencies: Record<string, string> };
/** The example config, as the image's process loads it. */
const example = loadConfigFile(path.join(ROOT, 'gateway.example.yaml'), { env: imageEnv });

describe('Dockerfile', () => {
  test('two stages: a build on the Node the project pins, and a distroless base that has glibc', () => {
    assert.equal(stages.length, 2);
    assert.equal(/^node:(\d+)-/.exec(build.from)?.[1], /\d+/.exec(pkg.devDependencies.node ?? '')?.[0], 'the Node major of package.json');
    // The executable links glibc, libstdc++ and libgcc_s: distroless "cc" has them, "static" has not.
    assert.match(image.from, /^gcr\.io\/distroless\/cc-debian\d+[:@]/);
  });

  test('the build stage runs the install CI runs, then npm run build', () => {
    const ci = read('.ci/run')
      .split('\n')
      .map((l) => l.trim());
    const ciInstall = ci.filter((l) => /^npm (ci|install|i)\b/.test(l));
    assert.deepEqual(ciInstall, ['npm ci']);
    const commands = all(build, 'RUN').flatMap((r) => r.split('&&').map((c) => c.trim()));
    assert.deepEqual(
      commands.filter((c) => c.startsWith('npm ')),
      [...ciInstall, 'npm run build'],
    );
    assert.ok(pkg.scripts.build, 'package.json has a build script');
  });

  test('COPY . . brings no node_modules, dist or data of the host over what the build made', () => {
    assert.ok(all(build, 'COPY').includes('. .'));
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    for (const name of ['node_modules', 'dist', 'data', '.git']) assert.ok(ignored.includes(name), name);
  });

  test('the image holds only the executable, the default config, the OpenAPI document it names, and an empty data folder owned by its user', () => {
    const workdir = only(build, 'WORKDIR');
    const copies = all(image, 'COPY').map((args) => {
      const { options: o, rest } = splitOptions(args);
      const [source, dest, ...more] = rest.split(' ');
      assert.equal(more.length, 0, `one source: COPY ${args}`);
      assert.equal(o.from, build.name, `from the build stage: COPY ${args}`);
      return { source, dest, chown: o.chown };
    });
    // The example's documents, where its `file:` (relative to the config's folder) finds them.
    const documents = [...example.openapi.values()].map((doc) => path.relative(ROOT, doc.file));
    assert.deepEqual(documents, ['examples/orders.openapi.yaml']);
    assert.deepEqual(copies, [
      { source: `${workdir}/dist/gateway`, dest: installed, chown: undefined },
      { source: `${workdir}/gateway.example.yaml`, dest: configPath, chown: undefined },
      ...documents.map((file) => ({ source: `${workdir}/${file}`, dest: path.posix.join(path.posix.dirname(configPath), file), chown: undefined })),
      { source: copies.at(-1)?.source, dest: volume, chown: user },
    ]);
    // Made empty in the build stage: the image has no shell to make it.
    assert.ok(all(build, 'RUN').includes(`mkdir ${copies.at(-1)?.source}`));
  });

  test('it runs as a numeric non-root user, which runAsNonRoot can check', () => {
    assert.match(user, /^[0-9]+(:[0-9]+)?$/);
    assert.notEqual(Number(user.split(':')[0]), 0);
  });

  test('it serves the config at the documented path with the executable it installed', () => {
    assert.deepEqual(entrypoint, ['/usr/local/bin/gateway']);
    assert.deepEqual(cmd, ['--config', '/etc/gateway/gateway.yaml']);
  });

  test('EXPOSE names the ports the example listens on in the image', () => {
    assert.deepEqual(only(image, 'EXPOSE').split(' ').map(Number), [example.listen.port, example.portal?.port]);
  });

  test("the example config, with the image's ENV: the store in the VOLUME, the API on every address, the portal on loopback until asked", () => {
    assert.equal(path.posix.dirname(imageEnv.GATEWAY_DB ?? ''), volume);
    assert.equal(example.store.driver, 'sqlite');
    assert.equal(example.store.path, imageEnv.GATEWAY_DB);
    assert.equal(path.posix.dirname(example.store.secretKeyFile), volume);
    assert.equal(example.listen.host, '0.0.0.0');
    // The example's portal takes open sign-ups: published only with -e PORTAL_HOST=0.0.0.0.
    assert.equal(example.portal?.host, '127.0.0.1');
    const asked = loadConfigFile(path.join(ROOT, 'gateway.example.yaml'), { env: { ...imageEnv, PORTAL_HOST: '0.0.0.0' } });
    assert.equal(asked.portal?.host, '0.0.0.0');
  });

  test('HEALTHCHECK: exec form, the installed executable, the same config as CMD, and time for its 2 s wait', () => {
    const { options: o, rest } = splitOptions(only(image, 'HEALTHCHECK'));
    assert.match(rest, /^CMD /);
    assert.deepEqual(execForm(rest.slice('CMD '.length)), [installed, 'healthcheck', '--config', configPath]);
    assert.ok(seconds(o.timeout ?? '30s') > 2, 'the subcommand gives the listener 2 s, and needs time to start');
    // It asks for the metadata document, which is served only with an issuer.
    assert.ok(example.oauth.issuer);
  });

  test("docs/deploy/README.md runs the image with its ports, volume and config path, the portal's port only with PORTAL_HOST, and time to drain", () => {
    const runs = [...read('docs/deploy/README.md').matchAll(/docker run ((?:[^\n]*\\\n)*[^\n]*)/g)].map((m) => m[1]!.replace(/\\\n/g, ' '));
    assert.ok(runs.length > 0, 'a docker run line');
    for (const run of runs) {
      const published = [...run.matchAll(/-p (\d+):(\d+)/g)].map((m) => Number(m[2]));
      const portal = run.includes('-e PORTAL_HOST=0.0.0.0');
      assert.deepEqual(published, portal ? [example.listen.port, example.portal?.port] : [example.listen.port], run);
      assert.deepEqual(published, only(image, 'EXPOSE').split(' ').map(Number).slice(0, published.length));
      assert.match(run, new RegExp(`-v \\S+:${volume} `));
      assert.match(run, new RegExp(`-v \\S+:${configPath}:ro`));
      // docker stop sends SIGKILL after 10 s unless told otherwise; the drain may take shutdownTimeout.
      const stopTimeout = Number(/--stop-timeout (\d+) /.exec(run)?.[1] ?? 10);
      assert.ok(stopTimeout >= example.shutdownTimeoutMs / 1000 + AFTER_DRAIN_S, `--stop-timeout ${stopTimeout} ≥ shutdownTimeout + ${AFTER_DRAIN_S} s: ${run}`);
    }
  });
});

// ---- Kubernetes

interface Probe {
  httpGet?: { path: string; port: number | string };
  tcpSocket?: { port: number | string };
}
interface Container {
  name: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  securityContext?: { allowPrivilegeEscalation?: boolean; readOnlyRootFilesystem?: boolean; capabilities?: { drop?: string[] } };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; configMap?: { name: string }; emptyDir?: object }[];
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    template?: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
    selector?: Record<string, string>;
    ports?: { port: number; targetPort: number | string }[];
  };
}

function yamlDocuments(file: string): unknown[] {
  const docs = parseAllDocuments(read(file));
  assert.ok(Array.isArray(docs), `${file} holds documents`);
  return docs.map((doc, i) => {
    assert.deepEqual(
      [...doc.errors, ...doc.warnings].map((e) => e.message),
      [],
      `${file}, document ${i + 1}`,
    );
    return doc.toJS() as unknown;
  });
}

describe('docs/deploy/kubernetes-sidecar.yaml', () => {
  const manifests = yamlDocuments('docs/deploy/kubernetes-sidecar.yaml') as Manifest[];
  const one = (kind: string) => {
    const found = manifests.filter((m) => m.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0]!;
  };
  const configMap = one('ConfigMap');
  const secret = one('Secret');
  const service = one('Service');
  const template = one('Deployment').spec?.template ?? assert.fail('a pod template');
  const pod = template.spec;
  const gateway = pod.containers.find((c) => c.name === 'gateway') ?? assert.fail('a container named gateway');
  const [app, ...others] = pod.containers.filter((c) => c !== gateway);
  const mountOf = (volume: (v: NonNullable<PodSpec['volumes']>[number]) => unknown) => {
    const name = pod.volumes?.find((v) => volume(v))?.name;
    return gateway.volumeMounts?.find((m) => m.name === name)?.mountPath ?? assert.fail('a mounted volume');
  };
  /** A port by number or by the name the gateway container gives it. */
  const portNumber = (port: number | string | undefined) => (typeof port === 'number' ? port : gateway.ports?.find((p) => p.name === port)?.containerPort);

  // The env the gateway's process sees: the image's ENV, then the container's; a secret's value
  // stands in as a placeholder.
  const secretKeys = Object.keys({ ...secret.data, ...secret.stringData });
  const env: Record<string, string> = { ...imageEnv };
  for (const e of gateway.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref !== undefined) {
      assert.equal(ref.name, secret.metadata.name, `${e.name} names the Secret`);
      assert.ok(secretKeys.includes(ref.key), `${e.name}: the Secret has the key ${ref.key}`);
    }
    env[e.name] = e.value ?? (ref === undefined ? assert.fail(`${e.name}: a value or a secretKeyRef`) : 'placeholder-from-the-secret');
  }
  const configMount = mountOf((v) => v.configMap?.name === configMap.metadata.name);
  const [[key, configText] = assert.fail('one file in the ConfigMap'), ...moreKeys] = Object.entries(configMap.data ?? {});
  const dir = tempDir();
  after(() => dir.remove());
  writeFileSync(path.join(dir.dir, key), configText);
  const config = loadConfigFile(path.join(dir.dir, key), { env });

  test('one app container besides the gateway; the ConfigMap holds one file and the container reads it', () => {
    assert.ok(app !== undefined && others.length === 0);
    assert.equal(moreKeys.length, 0);
    assert.deepEqual(gateway.args, ['--config', path.posix.join(configMount, key)]);
    assert.deepEqual(gateway.args, cmd, 'the same path as the image');
  });

  const admin = config.admin ?? assert.fail('the pod config has an admin listener');

  test("the container names the config's API and admin ports; the Service only the API's", () => {
    assert.deepEqual(
      gateway.ports?.map((p) => p.containerPort),
      [config.listen.port, admin.port],
    );
    assert.deepEqual(
      service.spec?.ports?.map((p) => [p.port, portNumber(p.targetPort)]),
      [[config.listen.port, config.listen.port]],
    );
    for (const [label, value] of Object.entries(service.spec?.selector ?? {})) assert.equal(template.metadata.labels[label], value);
  });

  test('the probes ask /readyz and /healthz on the admin listener, which listens where the kubelet reaches it', () => {
    const asks = (probe: Probe | undefined) => probe?.httpGet && { path: probe.httpGet.path, port: portNumber(probe.httpGet.port) };
    assert.deepEqual(asks(gateway.readinessProbe), { path: ADMIN_PATHS.readyz, port: admin.port });
    assert.deepEqual(asks(gateway.livenessProbe), { path: ADMIN_PATHS.healthz, port: admin.port });
    // The kubelet probes the pod's address, not its loopback.
    assert.equal(admin.host, '0.0.0.0');
  });

  test("the pod asks Prometheus to scrape the admin listener's metrics", () => {
    const annotations = template.metadata.annotations ?? {};
    assert.equal(annotations['prometheus.io/scrape'], 'true');
    assert.equal(annotations['prometheus.io/port'], String(admin.port));
    assert.equal(annotations['prometheus.io/path'], ADMIN_PATHS.metrics);
  });

  test('the store is on an emptyDir', () => {
    const emptyDirs = new Set(pod.volumes?.filter((v) => v.emptyDir !== undefined).map((v) => v.name));
    assert.equal(config.store.driver, 'sqlite');
    const dataDir = path.posix.dirname(config.store.path);
    assert.ok(
      gateway.volumeMounts?.some((m) => emptyDirs.has(m.name) && m.mountPath === dataDir),
      `an emptyDir at ${dataDir}`,
    );
    assert.equal(path.posix.dirname(config.store.secretKeyFile), dataDir);
  });

  test('the upstreams are the app, on 127.0.0.1 at the port it listens on', () => {
    const listen = app?.args?.map((a) => /^-listen=127\.0\.0\.1:(\d+)$/.exec(a)?.[1]).find((p) => p !== undefined);
    assert.ok(listen, 'the app listens on 127.0.0.1');
    const origins = [...config.upstreams.values()].flatMap((u) => (u.kind === 'http' ? u.targets.map((t) => t.origin) : []));
    assert.deepEqual(origins, [`http://127.0.0.1:${listen}`]);
  });

  test('shutdown: a call in flight ends within the drain, the app outlives the drain, the grace period outlives both', () => {
    const gatewaySleep = gateway.lifecycle?.preStop?.sleep?.seconds ?? 0;
    const appSleep = app?.lifecycle?.preStop?.sleep?.seconds ?? 0;
    const grace = pod.terminationGracePeriodSeconds ?? 30;
    const shutdown = config.shutdownTimeoutMs / 1000;
    const upstreamTimeout = Math.max(...[...config.upstreams.values()].map((u) => (u.kind === 'http' ? u.timeoutMs / 1000 : 0)));
    assert.ok(gatewaySleep > 0);
    assert.ok(upstreamTimeout <= shutdown, `upstream timeout ${upstreamTimeout} s ≤ shutdownTimeout ${shutdown} s`);
    // The gateway forwards to the app until its drain ends: SIGTERM after its preStop, then up to shutdownTimeout.
    assert.ok(appSleep >= gatewaySleep + shutdown, `app ${appSleep} s ≥ gateway ${gatewaySleep} s + shutdownTimeout ${shutdown} s`);
    assert.ok(grace >= gatewaySleep + shutdown + AFTER_DRAIN_S, `grace ${grace} s ≥ gateway ${gatewaySleep} s + shutdownTimeout ${shutdown} s + ${AFTER_DRAIN_S} s`);
    assert.ok(grace > appSleep, `grace ${grace} s > app ${appSleep} s`);
  });

  test("locked down: non-root as the image's user, read-only root, no privilege escalation, no capabilities; no service links", () => {
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext?.runAsUser, Number(user.split(':')[0]));
    for (const c of pod.containers) {
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, c.name);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name);
      assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], c.name);
    }
    // A Service named "gateway" would otherwise set GATEWAY_PORT=tcp://…, which the config reads.
    assert.equal(pod.enableServiceLinks, false);
  });
});

test('every YAML file in docs/deploy parses', () => {
  const files = readdirSync(path.join(ROOT, 'docs/deploy')).filter((f) => /\.ya?ml$/.test(f));
  assert.ok(files.length > 0);
  for (const f of files) assert.ok(yamlDocuments(`docs/deploy/${f}`).length > 0, f);
});

// ---- systemd

/** A unit file's settings by section. */
function unitFile(text: string): Map<string, Map<string, string[]>> {
  const settings = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || /^[#;]/.test(line)) continue;
    if (/^\[.+\]$/.test(line)) {
      section = new Map();
      settings.set(line.slice(1, -1), section);
    } else {
      const [, name, value] = /^([A-Za-z]+)=(.*)$/.exec(line) ?? assert.fail(`not a setting: ${line}`);
      assert.ok(section, `${name} outside a section`);
      section.set(name!, [...(section.get(name!) ?? []), value!]);
    }
  }
  return settings;
}

describe('docs/deploy/gateway.service', () => {
  const text = read('docs/deploy/gateway.service');
  const settings = unitFile(text);
  const service = settings.get('Service') ?? assert.fail('a [Service] section');
  const one = (name: string) => {
    const values = service.get(name) ?? [];
    assert.equal(values.length, 1, `one ${name}=`);
    return values[0]!;
  };
  const environment = Object.fromEntries((service.get('Environment') ?? []).flatMap((v) => v.split(' ').map((pair) => pair.split('=', 2))));

  test('a dynamic user; the store in its state directory, the config in its configuration directory', () => {
    assert.equal(one('DynamicUser'), 'yes');
    assert.equal(path.posix.dirname(environment.GATEWAY_DB ?? ''), `/var/lib/${one('StateDirectory')}`);
    const [exe, ...args] = one('ExecStart').split(' ');
    assert.deepEqual(args, ['--config', configPath], "the image's path");
    assert.equal(exe, installed, "the image's path");
    assert.equal(path.posix.dirname(configPath), `/etc/${one('ConfigurationDirectory')}`);
    assert.equal(environment.GATEWAY_DB, imageEnv.GATEWAY_DB);
  });

  test('reload sends SIGHUP to the gateway; SIGTERM stops it, with time for the default shutdownTimeout; no MemoryDenyWriteExecute (V8 writes its code)', () => {
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID');
    assert.equal(one('KillSignal'), 'SIGTERM');
    // The example sets no shutdownTimeout, so it holds the default.
    assert.doesNotMatch(read('gateway.example.yaml'), /^shutdownTimeout:/m);
    const shutdown = example.shutdownTimeoutMs / 1000;
    assert.ok(seconds(one('TimeoutStopSec')) >= shutdown + AFTER_DRAIN_S, `TimeoutStopSec ${one('TimeoutStopSec')} ≥ shutdownTimeout ${shutdown} s + ${AFTER_DRAIN_S} s`);
    assert.equal(service.has('MemoryDenyWriteExecute'), false);
  });

  // Catches a misspelt or unknown setting, which systemd would ignore with a warning.
  const analyze = spawnSync('systemd-analyze', ['--version']);
  test('systemd-analyze verify finds nothing to say', { skip: analyze.error ? 'no systemd-analyze here' : false }, () => {
    const dir = tempDir();
    try {
      // verify checks that ExecStart's file exists: any executable stands in for the gateway.
      const file = path.join(dir.dir, 'gateway.service');
      writeFileSync(file, text.replace(`ExecStart=${installed}`, `ExecStart=${process.execPath}`));
      const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
      assert.equal(`${result.stdout}${result.stderr}`, '');
      assert.equal(result.status, 0);
    } finally {
      dir.remove();
    }
  });
});
