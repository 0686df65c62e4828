// The table of background jobs (src/maintenance/jobs.ts, rows in compose.ts): each scheduled job
// runs once at start, logs what its row says it did, a failure is logged under the job's name and
// not thrown, an unscheduled job never runs, and stopping waits for a run in progress.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../src/logger.js';
import { job, scheduleJobs } from '../../src/maintenance/jobs.js';

const HOUR = 3_600_000;

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('debug', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('scheduled jobs', () => {
  it('each runs at start and logs as its row says; a failure is logged by name; an unscheduled one never runs', async () => {
    const { logger, lines } = capture();
    let unscheduledRuns = 0;
    const stop = scheduleJobs(
      [
        job({ name: 'counting', everyMs: HOUR, run: async () => [1, 2], logged: (ids) => ['info', { ids }, 'counted'] }),
        job({ name: 'quiet', everyMs: HOUR, run: async () => 0, logged: (n) => (n > 0 ? ['info', { n }, 'did something'] : undefined) }),
        job({
          name: 'breaking',
          everyMs: HOUR,
          run: async () => {
            throw new Error('the database went away');
          },
          logged: () => ['info', {}, 'never'],
        }),
        job({
          name: 'by hand',
          everyMs: null,
          run: async () => {
            unscheduledRuns++;
          },
          logged: () => ['info', {}, 'never'],
        }),
      ],
      logger,
    );
    await stop();
    const seen = lines.map((l) => ({ level: l.level, msg: l.msg }));
    assert.deepEqual(
      seen.sort((a, b) => String(a.msg).localeCompare(String(b.msg))),
      [
        { level: 50, msg: 'breaking failed' },
        { level: 30, msg: 'counted' },
      ],
    );
    assert.deepEqual(lines.find((l) => l.msg === 'counted')?.ids, [1, 2]);
    assert.equal((lines.find((l) => l.msg === 'breaking failed')?.err as { message?: string })?.message, 'the database went away');
    assert.equal(unscheduledRuns, 0);
  });

  it('stopping waits for a run in progress', async () => {
    const { logger, lines } = capture();
    let finish!: () => void;
    const running = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const stop = scheduleJobs(
      [job({ name: 'slow', everyMs: HOUR, run: () => running.then(() => 'done'), logged: (r) => ['debug', { r }, 'slow done'] })],
      logger,
    );
    let stopped = false;
    const stopping = stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stopped, false, 'not before the run ends');
    finish();
    await stopping;
    assert.equal(stopped, true);
    assert.deepEqual(
      lines.map((l) => l.msg),
      ['slow done'],
    );
  });
});
