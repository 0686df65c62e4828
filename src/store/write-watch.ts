// Sees every write this process sends and bumps the change signal for those that touch what the
// authentication caches hold (auth-changes.ts). A write is signalled twice: when it is sent, so a
// read that overlaps it is not kept, and once it has committed (after the statement for a single
// statement; createStore's transaction bumps again after COMMIT), so that nothing read before
// the commit outlives it. Extra bumps cost cache misses, never correctness.
import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { AUTH_TABLES, type ChangeSignal } from './auth-changes.js';

const WRITE_IN_RAW_SQL = new RegExp(`\\b(insert\\s+into|update|delete\\s+from)\\s+(${Object.keys(AUTH_TABLES).join('|')})\\b`, 'i');

export class WriteWatch implements KyselyPlugin {
  /** writes sent and not yet answered (a failed one is never answered: weak, so it is not kept) */
  private readonly pending = new WeakSet<object>();

  constructor(private readonly signal: ChangeSignal) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (isAuthWrite(args.node)) {
      this.signal.bump();
      this.pending.add(args.queryId);
    }
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.pending.delete(args.queryId)) this.signal.bump();
    return Promise.resolve(args.result);
  }
}

function tableName(node: OperationNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind === 'TableNode') return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return undefined;
}

function columnName(node: OperationNode): string | undefined {
  if (node.kind !== 'ColumnNode') return undefined;
  return (node as unknown as { column: { name: string } }).column.name;
}

/** Whether the statement writes something an authentication cache holds. */
export function isAuthWrite(node: RootOperationNode): boolean {
  switch (node.kind) {
    case 'InsertQueryNode': {
      const rule = AUTH_TABLES[tableName(node.into) ?? ''];
      // an upsert may update the row it meets
      return rule !== undefined && (rule.inserts || node.onConflict !== undefined);
    }
    case 'UpdateQueryNode': {
      const rule = AUTH_TABLES[tableName(node.table) ?? ''];
      if (!rule) return false;
      if (rule.updates === '*') return true;
      const watched = rule.updates;
      return (node.updates ?? []).some((u) => {
        const name = columnName(u.column);
        return name === undefined || watched.includes(name);
      });
    }
    case 'DeleteQueryNode':
      return node.from.froms.some((f) => AUTH_TABLES[tableName(f) ?? ''] !== undefined);
    case 'RawNode':
      return WRITE_IN_RAW_SQL.test(node.sqlFragments.join('?'));
    default:
      return false;
  }
}
