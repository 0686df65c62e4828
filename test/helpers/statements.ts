// The statements an app sends to its database, as a list a test can compare: a Kysely plugin on
// the Db's kysely instance (startTestApp's `db` option), which sees every statement sent through
// it, raw sql included, and a wrapper of its `transaction()` for the BEGIN and COMMIT (or
// ROLLBACK) that Kysely sends without a plugin seeing them. Each statement is written
// `<verb> <table>`: "select sessions", "insert sign_in_failures", "update saml_requests",
// "begin", "commit"; raw sql as "sql <its first words>".
import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { sql } from 'kysely';
import { AUTH_CHANGES_CHANNEL } from '../../src/store/auth-changes.js';
import type { Db, Engine } from '../../src/store/db.js';
import { openTestDb, type TestDb } from './db.js';

export class StatementLog implements KyselyPlugin {
  /** every statement sent since the last take(), in order */
  private sent: string[] = [];

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.sent.push(describe(args.node));
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }

  note(what: string): void {
    this.sent.push(what);
  }

  /** the statements sent since the last call, and forgets them */
  take(): string[] {
    const sent = this.sent;
    this.sent = [];
    return sent;
  }

  /** the statements `run` sent */
  async of(run: () => Promise<unknown>): Promise<string[]> {
    this.take();
    await run();
    return this.take();
  }
}

/** A fresh test database whose statements through `kysely` are logged. The app goes on using
 *  the Db's change signal and listener: only what it sends is seen, as it is sent. */
export async function loggedTestDb(engine: Engine): Promise<{ db: TestDb; log: StatementLog; settle: () => Promise<void> }> {
  const inner = await openTestDb(engine);
  const log = new StatementLog();
  const kysely = inner.kysely.withPlugin(log);
  const transaction = kysely.transaction.bind(kysely);
  kysely.transaction = () => {
    const builder = transaction();
    const execute = builder.execute.bind(builder);
    builder.execute = async (fn) => {
      log.note('begin');
      try {
        const result = await execute(fn);
        log.note('commit');
        return result;
      } catch (err) {
        log.note('rollback');
        throw err;
      }
    };
    return builder;
  };
  const db: TestDb = { ...inner, kysely };
  return { db, log, settle: () => settleChanges(inner) };
}

/**
 * On PostgreSQL, the notifications of the writes made so far (migration auth-changes: they void
 * the caches when they arrive, a few milliseconds after their commit) have all arrived: one more
 * is sent, through the unlogged connection, and waited for. Notifications are delivered in
 * commit order, so once it has moved the signal every earlier one has. PGlite has no listener.
 * On PostgreSQL the signal ends one generation further than the writes alone moved it.
 */
export async function settleChanges(db: Db): Promise<void> {
  if (!db.listenForChanges) return;
  const before = db.changes.generation;
  await sql`select pg_notify(${AUTH_CHANGES_CHANNEL}, current_schema())`.execute(db.kysely);
  const deadline = Date.now() + 10_000;
  while (db.changes.generation === before) {
    if (Date.now() > deadline) throw new Error('the notification sent did not arrive within 10 s');
    await new Promise((r) => setTimeout(r, 2));
  }
}

function tableOf(node: OperationNode | undefined): string {
  if (!node) return '?';
  if (node.kind === 'AliasNode') return tableOf((node as unknown as { node: OperationNode }).node);
  if (node.kind === 'TableNode') return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return '?';
}

function describe(node: RootOperationNode): string {
  switch (node.kind) {
    case 'SelectQueryNode':
      return `select ${node.from ? tableOf(node.from.froms[0]) : '(no table)'}`;
    case 'InsertQueryNode':
      return `insert ${tableOf(node.into)}`;
    case 'UpdateQueryNode':
      return `update ${tableOf(node.table)}`;
    case 'DeleteQueryNode':
      return `delete ${tableOf(node.from.froms[0])}`;
    case 'RawNode':
      return `sql ${node.sqlFragments.join('?').replace(/\s+/g, ' ').trim().split(' ').slice(0, 4).join(' ')}`;
    default:
      return node.kind;
  }
}
