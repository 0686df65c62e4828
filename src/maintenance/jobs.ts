// The jobs a service runs in the background (compose.ts holds their table): each runs once at
// start and then at its interval, one run at a time; what a run did is logged as its row says, a
// failure is logged and never thrown (the next run tries again). Stopping waits for a run in
// progress, so shutdown never closes the database under it.
import type { Logger } from 'pino';

/** What a run logs: at which level, the fields, the message. */
export type JobLog = ['warn' | 'info' | 'debug', Record<string, unknown>, string];

export interface Job<R> {
  /** what the log calls it ("<name> failed") */
  name: string;
  /** null: not scheduled (tests run the job by hand) */
  everyMs: number | null;
  run: () => Promise<R>;
  /** what a run that did something logs; undefined when it did nothing worth a line */
  logged: (result: R) => JobLog | undefined;
}

/** One row of the table (keeps each row's result type its own). */
export function job<R>(row: Job<R>): Job<unknown> {
  return row as Job<unknown>;
}

/** Starts every scheduled job of the table; the function returned stops them all. */
export function scheduleJobs(jobs: readonly Job<unknown>[], logger: Logger): () => Promise<void> {
  const stops = jobs.flatMap((j) => {
    if (j.everyMs === null) return [];
    return [
      schedule(
        async () => {
          const line = j.logged(await j.run());
          if (line) logger[line[0]](line[1], line[2]);
        },
        j.everyMs,
        (err) => logger.error({ err }, `${j.name} failed`),
      ),
    ];
  });
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
}

/** Runs `run` now and then every `intervalMs`, never two at once; errors go to `onError`. */
function schedule(run: () => Promise<void>, intervalMs: number, onError: (err: unknown) => void): () => Promise<void> {
  let current: Promise<void> | undefined;
  const tick = () => {
    current ??= run()
      .then(() => undefined, onError)
      .finally(() => (current = undefined));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await current;
  };
}
