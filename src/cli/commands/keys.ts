// gatehouse keys list|rotate|retire KID: the token-signing keys, for operators, straight on the
// database (whoever runs it holds the database and its encryption key). Changes are audited as
// actor: the operator (the OS user); every running server sees them through the database's change signal (on
// PostgreSQL within a second; the embedded folder has one owner at a time, so stop serve first).
import { parseArgs } from 'node:util';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { resolveEncryptionKeys, SealedBox } from '../../crypto/sealed-box.js';
import { AppError } from '../../errors.js';
import type { KeyChange, KeyListing } from '../../keys/service.js';
import { KeyService } from '../../keys/service.js';
import { CLOCK_SKEW_SECONDS } from '../../oauth/access-token.js';
import { rotationSettings } from '../../keys/model.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { createStore } from '../../store/index.js';
import { StartFailure } from '../failure-line.js';
import { currentOperator } from '../operator.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb, requireCurrentSchema } from './open-db.js';

const ACTIONS = ['list', 'rotate', 'retire'] as const;

export type KeysCommandLine = { json: boolean } & ({ action: 'list' | 'rotate' } | { action: 'retire'; kid: string; yes: boolean });

/** Reads a `keys` command line (the words after `keys`); every mistake is a UsageError, said before the database is opened. */
export function keysCommandLine(args: string[]): KeysCommandLine {
  // A key id is base64url and may begin with "-" ("-PxY…"): the first word after `retire` that is
  // not one of the command's own options is the id, whatever it looks like.
  const at = args.indexOf('retire');
  const idAt = at === -1 ? -1 : args.findIndex((w, i) => i > at && !OPTION_WORDS.has(w));
  const idWord = idAt === -1 ? undefined : args[idAt];
  const words = idAt === -1 ? args : args.filter((_, i) => i !== idAt);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(words);
  } catch (err) {
    // node:util names the option: "Unknown option '--yess'"
    throw new UsageError((err as Error).message.replace(/\. To specify.*$/s, ''));
  }
  const [action, ...rest] = parsed.positionals;
  const json = parsed.values.json === true;
  if (!action || !(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(action ? `unknown keys action ${action}: use list, rotate or retire` : 'keys needs an action: list, rotate or retire KID');
  }
  if (action === 'retire') {
    const [kid, ...more] = idWord === undefined ? rest : [idWord, ...rest];
    if (!kid) throw new UsageError('keys retire needs the id (kid) of the key to retire: gatehouse keys list shows them');
    if (more.length > 0) throw new UsageError(`keys retire takes one key id; unexpected ${more[0]}`);
    return { action, kid, yes: parsed.values.yes === true, json };
  }
  if (rest.length > 0) throw new UsageError(`keys ${action} takes no argument; unexpected ${rest[0]}`);
  if (parsed.values.yes) throw new UsageError(`--yes is for keys retire only`);
  return { action: action as 'list' | 'rotate', json };
}

/** the words that are options of `keys`, never a key id */
const OPTION_WORDS = new Set(['--yes', '--json', '--help', '-h']);

function parse(args: string[]) {
  return parseArgs({ args, options: { yes: { type: 'boolean' }, json: { type: 'boolean' } }, strict: true, allowPositionals: true });
}

/** The refusal when a running server holds the embedded folder: what to do instead. */
function folderInUse(err: DataDirLockedError, dataDir: string): StartFailure {
  if (!err.holder) return new StartFailure(err.message, { cause: err });
  return new StartFailure(
    `the embedded database folder ${dataDir} is in use by ${err.holder} (a running gatehouse serve); ` +
      'keys works on the database itself, one process at a time: stop the server and run this again (docs/operations.md, "Signing keys")',
    { cause: err },
  );
}

const iso = (d: Date | undefined | null) => (d ? d.toISOString() : '-');

function describe(k: KeyListing): string {
  return `${k.kid}\t${k.state}\tcreated ${iso(k.createdAt)}\tsigns ${iso(k.signsFrom)} .. ${iso(k.signsUntil)}\tout of the JWKS ${iso(k.unpublishedAt)}`;
}

function toJson(k: KeyListing): Record<string, unknown> {
  return {
    kid: k.kid,
    state: k.state,
    created_at: k.createdAt.toISOString(),
    signs_from: k.signsFrom.toISOString(),
    signs_until: k.signsUntil?.toISOString() ?? null,
    retired_at: k.retiredAt?.toISOString() ?? null,
    unpublished_at: k.unpublishedAt?.toISOString() ?? null,
  };
}

function changeLines(change: KeyChange): string[] {
  const lines = [`signing now: ${change.signing}`];
  if (change.next) lines.push(`next: ${change.next.kid}, in the JWKS now, signs from ${change.next.signsFrom.toISOString()}`);
  return lines;
}

/** `out`: where lines go (standard output; a test gives its own). */
export async function keysCommand(
  config: Config,
  args: string[],
  out: (line: string) => void = (text) => process.stdout.write(`${text}\n`),
): Promise<number> {
  const line = keysCommandLine(args);
  let db: Awaited<ReturnType<typeof openConfiguredDb>>;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw folderInUse(err, config.dataDir);
    throw err;
  }
  try {
    await requireCurrentSchema(db, 'this database has no signing key yet: start `gatehouse serve` once first (it makes the first key)');
    const store = createStore(db.kysely, systemClock);
    if ((await store.keys.listKeys()).length === 0) {
      throw new UsageError('this database has no signing key yet: start `gatehouse serve` once first (it makes the first key)');
    }
    const settings = rotationSettings({
      rotateDays: config.signingKeyRotateDays,
      prepublishHours: config.signingKeyPrepublishHours,
      tokenTtlSeconds: config.tokenTtlSeconds,
      clockSkewSeconds: CLOCK_SKEW_SECONDS,
    });
    // the encryption key is needed only to make a key (list and most retirements work without it;
    // the service says when it is missing)
    let box: SealedBox | undefined;
    if (config.encryptionKeys.length > 0 || db.engine === 'pglite') {
      box = new SealedBox(resolveEncryptionKeys(config.encryptionKeys, config.dataDir, db.engine));
    }
    const keys = new KeyService(store, box, systemClock, settings);
    switch (line.action) {
      case 'list': {
        for (const k of await keys.list()) out(line.json ? JSON.stringify(toJson(k)) : describe(k));
        return 0;
      }
      case 'rotate': {
        const change = await keys.rotate(currentOperator());
        out(
          `rotation started: the next key is published now and signs after ${config.signingKeyPrepublishHours} h (GATEHOUSE_SIGNING_KEY_PREPUBLISH_HOURS); ` +
            'the current key keeps signing until then, and stays in the JWKS until its last token has expired',
        );
        for (const l of changeLines(change)) out(l);
        return 0;
      }
      case 'retire': {
        const listed = (await keys.list()).find((k) => k.kid === line.kid);
        if (!listed) throw new UsageError(`no signing key has the id ${line.kid}: gatehouse keys list shows them`);
        if (!line.yes) {
          const what =
            listed.state === 'signing'
              ? 'it signs now: another key signs at once (the pre-published next key if there is one, else a new key that resource servers fetch on first sight of its kid)'
              : 'it does not sign now';
          out(
            `retiring ${line.kid} takes it out of the JWKS and makes every token it signed refused at once, on every server; ${what}. ` +
              `Nothing was changed: run gatehouse keys retire ${line.kid} --yes to do it`,
          );
          return 1;
        }
        const change = await keys.retire(currentOperator(), line.kid);
        out(`retired ${line.kid}: out of the JWKS, its tokens refused (every server within a second on PostgreSQL)`);
        for (const l of changeLines(change)) out(l);
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}
