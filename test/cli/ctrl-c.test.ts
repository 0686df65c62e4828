// Ctrl-C on every documented start command (`npm start`, `npx gatehouse serve`, `node
// bin/gatehouse.js serve`), as a person presses it: in a pseudo-terminal, where the terminal
// signals the whole foreground process group (npm and its child alike) and npm then passes the
// signal on to its child a second time. Each press must run the clean stop ("shutting down", the
// data-folder lock removed, exit 130 as the shell shows it), so that the next start, right after,
// is never refused. Several times in a row for each command: a stop that loses a race now and then
// shows up here for `npm start`, where npm's second signal used to kill the process in the middle
// of its stop 3 times in 4; the other two commands, which get the signal once here (npx runs the
// command through dash, which does not pass it on), three times each, as each start costs seconds.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PATIENCE_MS, cleanEnv, ensureBuilt, exitOf, freePort, gatehouse, migratedDataDir, root, waitHealthy } from '../helpers/cli.js';

// `npm start` four times: the race this file was written for (npm's copy of the signal killing
// the process in the middle of its stop, 3 times in 4 then) fails four rounds with a chance of
// 255 in 256; the last test below sends the copies deterministically, at every moment of the stop.
const PRESSES: Record<string, number> = { 'npm start': 4, 'npx gatehouse serve': 3, 'node bin/gatehouse.js serve': 3 };

// Runs COMMAND in a pseudo-terminal N times in a row: waits until it serves, "presses"
// Ctrl-C (writes ^C to the terminal, whose line discipline turns it into SIGINT for the
// foreground process group), waits for the end, and prints one JSON line per round.
const DRIVER = `
import json, os, select, sys, time
presses, datadir, patience = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
command = sys.argv[4:]
for round in range(presses):
    # pty.fork() leaves the parent only the master side: once every process holding the terminal
    # has exited, Linux may answer the master's read with EIO while the last output (the stop's
    # log lines) is still unread, as happens when this driver is not scheduled for a while on a
    # busy machine. The parent keeps a slave descriptor of its own open, so the output stays
    # readable until drained, and the end of the round is the command's exit.
    master, slave = os.openpty()
    name = os.ttyname(slave)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.close(master)
        tty = os.open(name, os.O_RDWR)  # the session's controlling terminal, as in a shell
        for std in (0, 1, 2):
            os.dup2(tty, std)
        os.close(tty)
        os.close(slave)
        os.execvp(command[0], command)
    out = b''
    status = None
    def drain(wait):
        global out
        while True:
            ready, _, _ = select.select([master], [], [], wait)
            if not ready:
                return
            data = os.read(master, 65536)
            if not data:
                return
            out += data
    def read(seconds, until=None):
        global out, status
        if status is not None:
            return False
        end = time.time() + seconds
        while time.time() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                out += os.read(master, 65536)
                if until is not None and until in out:
                    return True
            if status is None:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = code
                    # npm may end (killed by the same SIGINT) before the server it started has
                    # finished its stop, which goes on writing to the terminal: the round ends
                    # when the data folder's lock is released (the stop's last act) or the
                    # patience runs out, the output read meanwhile
                    lock = os.path.join(datadir, 'gatehouse.lock')
                    free_by = time.time() + seconds
                    while os.path.exists(lock) and time.time() < free_by:
                        drain(0.1)
                    drain(0.5)
                    return False
        return None
    served = read(patience, b'gatehouse serving') is True
    if served:
        os.write(master, b'')
    read(patience)
    os.close(slave)
    if status is None:
        # still running after the patience: closing the terminal hangs it up (SIGHUP), as closing
        # a terminal window does
        os.close(master)
        _, status = os.waitpid(pid, 0)
    else:
        os.close(master)
    print(json.dumps({
        'round': round + 1,
        'served': served,
        'status': os.waitstatus_to_exitcode(status),
        'lock_left': os.path.exists(os.path.join(datadir, 'gatehouse.lock')),
        'output': out.decode('utf-8', 'replace')[-3000:],
    }), flush=True)
`;

interface Round {
  round: number;
  served: boolean;
  /** as Python reports it: the exit code, or minus the signal that ended the process */
  status: number;
  lock_left: boolean;
  output: string;
}

/** 130 as a shell shows it: exit code 130, or death by SIGINT (npx's shell, dash, ends so). */
const interrupted = (status: number) => status === 130 || status === -2;

/** The driver, run to its end without blocking this process (the commands' tests run at once). */
function driven(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

// the commands' tests are independent (a data folder and a port each) and mostly wait on the
// server they start: they run at once
describe('Ctrl-C in a terminal on every documented start command: the clean stop, every time', { concurrency: true }, () => {
  let tmp: string;
  before(() => {
    ensureBuilt();
    tmp = mkdtempSync(join(tmpdir(), 'gatehouse-ctrl-c-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  for (const command of [
    ['npm', 'start'],
    ['npx', 'gatehouse', 'serve'],
    [process.execPath, 'bin/gatehouse.js', 'serve'],
  ]) {
    const name = command[0] === process.execPath ? 'node bin/gatehouse.js serve' : command.join(' ');
    const presses = PRESSES[name]!;
    it(`${name}: ${presses} starts, each stopped by one Ctrl-C: "shutting down", lock released, 130`, { timeout: 300_000 }, async () => {
      // a migrated folder: each start below is an ordinary one (the first also bootstraps)
      const dataDir = await migratedDataDir(join(tmp, name.replace(/\W+/g, '-')));
      const env = cleanEnv({ GATEHOUSE_DATA_DIR: dataDir, PORT: String(await freePort()), npm_config_update_notifier: 'false' });
      const run = await driven(['-c', DRIVER, String(presses), dataDir, String(PATIENCE_MS / 1000), ...command], env, 280_000);
      assert.equal(run.status, 0, `the driver failed:\n${run.stderr}`);
      const rounds = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Round);
      assert.equal(rounds.length, presses);
      for (const r of rounds) {
        const seen = `round ${r.round} of ${name} (status ${r.status}); the terminal showed:\n${r.output}`;
        assert.ok(r.served, `it served (the previous stop left the folder free): ${seen}`);
        assert.match(r.output, /"msg":"shutting down"/, `the clean stop ran: ${seen}`);
        assert.equal(r.lock_left, false, `the data-folder lock was released: ${seen}`);
        assert.ok(interrupted(r.status), `status 130 (got ${r.status}): ${seen}`);
        assert.doesNotMatch(r.output, /npm error|a stop is under way/, seen);
      }
    });
  }

  // npm's copy of the signal comes some milliseconds after the terminal's, later still on a busy
  // machine: it may land during the stop, after it, or while the process is already ending. On
  // Node 26 a process that ended by itself took its signal handlers down and then went on ending
  // for some 100 ms; a copy landing then killed it by SIGINT, with the log's last lines unwritten
  // (npm then dies the same way, and the terminal shows no 130: seen twice in CI). A signal every
  // 2 ms from the first until the end reaches every one of those moments.
  it('a signal repeated every few milliseconds from the first until the end never cuts the stop short: 130, "shutting down", lock released', {
    timeout: 120_000,
  }, async () => {
    const dataDir = await migratedDataDir(join(tmp, 'repeated'));
    const port = await freePort();
    const p = gatehouse(['serve'], { GATEHOUSE_DATA_DIR: dataDir, PORT: String(port) });
    await waitHealthy(p, port);
    const ended = exitOf(p, PATIENCE_MS);
    let sent = 0;
    const again = setInterval(() => {
      try {
        p.child.kill('SIGINT');
        sent++;
      } catch {
        /* gone */
      }
    }, 2);
    p.child.kill('SIGINT');
    const r = await ended.finally(() => clearInterval(again));
    const seen = `after ${sent} more signals; output:\n${p.stdout()}${p.stderr()}`;
    assert.equal(r.signal, null, `not ended by a signal: ${seen}`);
    assert.equal(r.code, 130, seen);
    assert.match(p.stdout(), /"msg":"shutting down"/, seen);
    assert.equal(existsSync(join(dataDir, 'gatehouse.lock')), false, 'the data-folder lock was released');
  });
});
