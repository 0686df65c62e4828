// Hears the changes other processes make to one PostgreSQL database: the triggers of migrations
// 20261126T0900-auth-changes and 20261128T0900-listing-changes NOTIFY on every write that matters
// to the caches (auth-changes.ts), with the written table's schema as payload, and this dedicated
// connection LISTENs. Each notification for our schema bumps the change signal. While the connection is
// down the signal is marked unreliable, so the caches keep nothing, and it is opened again with a
// growing delay (0.25 s to 5 s); changes missed meanwhile do not matter, since nothing was kept.
// A connection that dies without a word (no FIN, no RST) is found by TCP keep-alive; until then
// the caches' lifetime (GATEHOUSE_AUTH_CACHE_SECONDS) bounds how long a missed change can live.
import pg from 'pg';
import { AUTH_CHANGES_CHANNEL, type ChangeSignal } from './auth-changes.js';

export interface ListenerEvents {
  lost(err: Error): void;
  restored(): void;
}

const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 5000;

export async function listenForChanges(
  connection: pg.ClientConfig,
  signal: ChangeSignal,
  events: ListenerEvents,
): Promise<{ close(): Promise<void> }> {
  let client: pg.Client | undefined;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  async function open(): Promise<void> {
    const c = new pg.Client({ application_name: 'gatehouse changes', ...connection, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    c.on('error', () => {}); // 'end' follows; handled there
    c.on('notification', (n) => {
      if (n.channel === AUTH_CHANGES_CHANNEL && n.payload === schema) signal.bump();
    });
    let schema: string;
    try {
      await c.connect();
      schema = (await c.query<{ schema: string }>('select current_schema() as schema')).rows[0]!.schema;
      await c.query(`listen ${AUTH_CHANGES_CHANNEL}`);
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
    if (closed) {
      await c.end();
      return;
    }
    c.once('end', () => {
      if (closed) return;
      client = undefined;
      signal.setReliable(false);
      events.lost(new Error('the connection listening for changes closed'));
      retry();
    });
    client = c;
    retryMs = FIRST_RETRY_MS;
    // from here on changes are heard; what was read before may have missed some
    signal.setReliable(true);
  }

  function retry(): void {
    timer = setTimeout(() => {
      open().then(
        () => {
          if (!closed) events.restored();
        },
        (err: Error) => {
          if (closed) return;
          events.lost(err);
          retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
          retry();
        },
      );
    }, retryMs);
    timer.unref();
  }

  // the first connection must succeed: a deployment whose caches cannot hear changes does not start quietly
  await open();
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      // nothing is heard from here on
      signal.setReliable(false);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
