// The image (issue 22, point 5; docs/operations.md, "The image"). No container engine runs on
// the CI machines, so the image is not built here: its Dockerfile is checked for the structure
// the deployment relies on (hadolint's main rules among them), and its exact start command and
// environment, read from the Dockerfile itself, are run from a production-only install laid out
// as the runtime stage lays it out (node_modules from `npm ci --omit=dev`, dist/, bin/,
// package.json), as an unprivileged user where the test runs as root: /readyz answers 200, the
// HEALTHCHECK command exits 0, and SIGTERM stops it with 0, as `docker stop` would.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ensureBuilt, exitOf, freePort, get, root, waitFor } from '../helpers/cli.js';

ensureBuilt();

interface Instruction {
  op: string;
  args: string;
  line: number;
}
interface Stage {
  from: string;
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile as stages of instructions (comments dropped, continuations joined). */
function parseDockerfile(text: string): { args: Instruction[]; stages: Stage[] } {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!pending && (line === '' || line.startsWith('#'))) return;
    if (!pending) start = i + 1;
    if (line.startsWith('#')) return;
    pending += `${line.replace(/\\$/, '').trim()} `;
    if (line.endsWith('\\')) return;
    const [op, ...rest] = pending.trim().split(/\s+/);
    instructions.push({ op: op!.toUpperCase(), args: rest.join(' '), line: start });
    pending = '';
  });
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const ins of instructions) {
    if (ins.op === 'FROM') {
      const [from, as, name] = ins.args.split(/\s+/);
      stages.push({ from: from!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) args.push(ins);
    else stages.at(-1)!.instructions.push(ins);
  }
  return { args, stages };
}

/** ENV a=b c=d (or the old ENV a b) as an object. */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of stage.instructions.filter((i) => i.op === 'ENV')) {
    if (!ins.args.includes('=')) {
      const [k, ...v] = ins.args.split(/\s+/);
      env[k!] = v.join(' ');
      continue;
    }
    for (const m of ins.args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S+)/g)) env[m[1]!] = m[2]!.replace(/^"|"$/g, '');
  }
  return env;
}

const execForm = (args: string): string[] => {
  const parsed = JSON.parse(args) as unknown;
  assert.ok(Array.isArray(parsed) && parsed.every((a) => typeof a === 'string'), `not the exec (JSON) form: ${args}`);
  return parsed as string[];
};

const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
const runtime = dockerfile.stages.at(-1)!;
const only = (op: string) => runtime.instructions.filter((i) => i.op === op);
const ENTRYPOINT = execForm(only('ENTRYPOINT').at(-1)!.args);
const HEALTHCHECK = execForm(
  only('HEALTHCHECK')
    .at(-1)!
    .args.replace(/^.*?\bCMD\s+/, ''),
);
const ENV = envOf(runtime);

describe('the Dockerfile', () => {
  it('is multi-stage: the build with development dependencies, the runtime with production ones only', () => {
    assert.ok(dockerfile.stages.length >= 2, 'at least a build stage and a runtime stage');
    const build = dockerfile.stages.find((s) => s.name === 'build');
    assert.ok(build, 'a stage named build');
    assert.ok(
      build.instructions.some((i) => i.op === 'RUN' && /scripts\/build\.mjs/.test(i.args)),
      'the build stage compiles dist/',
    );
    const installs = dockerfile.stages.flatMap((s) => s.instructions.filter((i) => i.op === 'RUN' && /\bnpm (ci|install)\b/.test(i.args)));
    const production = installs.filter((i) => /--omit=dev/.test(i.args));
    assert.ok(production.length > 0, 'npm ci --omit=dev somewhere');
    // what the runtime copies: the production install, the compiled code, never a full node_modules
    const copies = only('COPY').map((c) => c.args);
    const modules = copies.find((c) => /node_modules/.test(c));
    assert.ok(modules, 'the runtime copies node_modules');
    const from = /--from=(\S+)/.exec(modules)?.[1];
    const source = dockerfile.stages.find((s) => s.name === from);
    assert.ok(source, `node_modules comes from a named stage (${from})`);
    assert.ok(
      source.instructions.some((i) => i.op === 'RUN' && /npm ci\b.*--omit=dev/.test(i.args)),
      `the stage ${from} installs production dependencies only`,
    );
    assert.ok(
      copies.some((c) => /--from=build\s+\S*dist/.test(c)),
      'dist/ comes from the build stage',
    );
    assert.equal(
      only('RUN').some((i) => /\bnpm (ci|install)\b/.test(i.args) && !/--omit=dev/.test(i.args)),
      false,
      'no full install in the runtime stage',
    );
  });

  it('runs as a user other than root', () => {
    const user = only('USER').at(-1)?.args;
    assert.ok(user, 'USER in the runtime stage');
    assert.doesNotMatch(user, /^(root|0)(:|$)/);
    // and nothing runs after it as root again (hadolint DL3002)
    const last = runtime.instructions.findLastIndex((i) => i.op === 'USER');
    assert.equal(
      runtime.instructions.slice(last + 1).some((i) => i.op === 'RUN'),
      false,
      'no RUN after the last USER',
    );
  });

  it('starts gatehouse serve, checks /readyz with node, keeps /data as a volume', () => {
    assert.deepEqual(ENTRYPOINT, ['node', 'bin/gatehouse.js', 'serve']);
    assert.deepEqual(HEALTHCHECK, ['node', 'bin/healthcheck.js']);
    assert.match(readFileSync(join(root, 'bin/healthcheck.js'), 'utf8'), /\/readyz/);
    assert.equal(ENV.GATEHOUSE_DATA_DIR, '/data');
    assert.ok(
      only('VOLUME').some((v) => v.args.includes('/data')),
      'VOLUME /data',
    );
    assert.ok(
      only('EXPOSE').some((v) => v.args.split(/\s+/).includes(ENV.PORT ?? '8080')),
      'EXPOSE the PORT',
    );
    assert.equal(ENV.HOST, '0.0.0.0', 'listens on every interface of the container');
  });

  it("follows hadolint's main rules: tagged base images, COPY not ADD, WORKDIR, exec form, no secret in the image", () => {
    const stageNames = new Set(dockerfile.stages.map((s) => s.name));
    const argDefaults = Object.fromEntries(dockerfile.args.filter((a) => a.op === 'ARG').map((a) => a.args.split('=') as [string, string]));
    for (const s of dockerfile.stages) {
      const image = s.from.replace(/^\$\{(\w+)\}$/, (_, name: string) => argDefaults[name] ?? '');
      if (stageNames.has(image)) continue;
      assert.match(image, /^[\w./-]+:[\w.-]+(@sha256:[0-9a-f]{64})?$/, `FROM ${s.from}: a tagged image (DL3006)`);
      assert.doesNotMatch(image, /:latest$/, `FROM ${s.from}: not latest (DL3007)`);
      assert.ok(
        s.instructions.some((i) => i.op === 'WORKDIR'),
        `stage ${s.name}: WORKDIR, not cd (DL3003)`,
      );
    }
    const all = dockerfile.stages.flatMap((s) => s.instructions);
    assert.equal(all.filter((i) => i.op === 'ADD').length, 0, 'COPY, not ADD (DL3020)');
    assert.equal(
      all.some((i) => i.op === 'RUN' && /\bcd\s/.test(i.args)),
      false,
      'no cd in RUN (DL3003)',
    );
    for (const s of dockerfile.stages) {
      for (const k of Object.keys(envOf(s))) {
        assert.doesNotMatch(k, /KEY|SECRET|PASSWORD|DATABASE_URL/, `ENV ${k}: a secret has no place in an image layer`);
      }
    }
    const ignore = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['.git', 'node_modules', 'dist', 'data']) assert.ok(ignore.includes(entry), `.dockerignore leaves out ${entry}`);
  });
});

describe('compose.yaml', () => {
  const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
  it('runs PostgreSQL, two Gatehouse processes sharing the database and the sealing key, and a proxy in front', () => {
    for (const service of ['postgres', 'gatehouse-1', 'gatehouse-2', 'proxy']) assert.match(compose, new RegExp(`^  ${service}:$`, 'm'), service);
    // one definition shared by both processes: the same DATABASE_URL and GATEHOUSE_ENCRYPTION_KEY
    assert.match(compose, /^x-gatehouse: &gatehouse$/m);
    assert.equal(compose.match(/<<: \*gatehouse/g)?.length, 2);
    assert.match(compose, /GATEHOUSE_ENCRYPTION_KEY: \$\{GATEHOUSE_ENCRYPTION_KEY:\?/);
    assert.match(compose, /DATABASE_URL: postgres:\/\/.*@postgres:5432\//);
    const nginx = readFileSync(join(root, 'deploy/nginx.conf'), 'utf8');
    assert.match(nginx, /server gatehouse-1:8080/);
    assert.match(nginx, /server gatehouse-2:8080/);
  });
});

/** Runs a command as the unprivileged user when we are root (the image's USER), else as we are.
 *  setpriv execs the command itself (runuser would stay in between and end it on SIGTERM). */
function asUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', '--', command, ...args]] : [command, args];
}

describe("the image's start command and environment, from a production-only install", () => {
  let app: string;
  let data: string;
  before(() => {
    // the runtime stage's /app: package.json, the production dependencies, dist/, bin/
    app = mkdtempSync(join(tmpdir(), 'gatehouse-image-'));
    chmodSync(app, 0o755);
    cpSync(join(root, 'package.json'), join(app, 'package.json'));
    cpSync(join(root, 'package-lock.json'), join(app, 'package-lock.json'));
    execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], {
      cwd: app,
      stdio: 'ignore',
      timeout: 180_000,
    });
    cpSync(join(root, 'dist'), join(app, 'dist'), { recursive: true });
    cpSync(join(root, 'bin'), join(app, 'bin'), { recursive: true });
    // the volume, owned by the image's user
    data = join(app, 'data');
    mkdirSync(data);
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }));
      chownSync(data, uid, uid);
    }
  });
  after(() => rmSync(app, { recursive: true, force: true }));

  it('starts, answers /readyz, passes its health check, and stops cleanly on SIGTERM', async () => {
    assert.ok(!existsSync(join(app, 'node_modules', 'typescript')), 'no development dependency installed');
    const port = await freePort();
    // the image's environment, with what the host decides instead of the image: the published
    // port and where the volume is mounted
    const env = {
      PATH: process.env.PATH!,
      HOME: app,
      ...ENV,
      PORT: String(port),
      GATEHOUSE_DATA_DIR: data,
      GATEHOUSE_BASE_URL: 'http://localhost:8080',
    };
    const [cmd, argv] = asUser(ENTRYPOINT[0] === 'node' ? process.execPath : ENTRYPOINT[0]!, ENTRYPOINT.slice(1));
    const child = spawn(cmd, argv, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.once('close', (code, signal) => r({ code, signal })),
    );
    try {
      await waitFor('/readyz', 60_000, async () => {
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}:\n${out}`);
        return (await get(port, '/readyz'))?.status === 200 ? true : undefined;
      });
      // it runs as the unprivileged user (setpriv execs node itself: the child is the server)
      if (process.getuid?.() === 0) assert.match(readFileSync(`/proc/${child.pid}/status`, 'utf8'), /^Uid:\s+65534\s/m);
      const [hcmd, hargv] = asUser(HEALTHCHECK[0] === 'node' ? process.execPath : HEALTHCHECK[0]!, HEALTHCHECK.slice(1));
      const health = spawnSync(hcmd, hargv, { cwd: app, env, timeout: 10_000 });
      assert.equal(health.status, 0, `health check: ${health.stderr}`);
      // the bootstrap notice went to standard output, the log lines are JSON; the line saying it
      // serves comes just after the port opens, and may still be in the pipe (the health check
      // above blocked this process's event loop while it ran)
      await waitFor('the "gatehouse serving" log line', 10_000, () => (/gatehouse serving/.test(out) ? true : undefined));
    } finally {
      child.kill('SIGTERM');
    }
    const r = await exitOf(
      {
        exited,
        child,
        stdout: () => out,
        stderr: () => '',
        running: () => child.exitCode === null,
        times: () => ({ firstStderr: undefined, exit: undefined }),
      },
      20_000,
    );
    assert.equal(r.code, 0, out.slice(-2000));
    // a stopped process fails the health check
    const [hcmd, hargv] = asUser(process.execPath, HEALTHCHECK.slice(1));
    assert.equal(spawnSync(hcmd, hargv, { cwd: app, env, timeout: 10_000 }).status, 1);
  });
});
