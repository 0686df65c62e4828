// gatehouse mail [list] [--status S] [--limit N] | show ID: the mail the service sent or is
// sending (docs/operations.md "Mail"). The outbox folder (no SMTP server: every message is written
// there) is read from the disk, so it works while serve holds the embedded database; the outbox
// table is read from the database when it can be opened (PostgreSQL, or the embedded folder with
// serve stopped).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { SealedBox, resolveEncryptionKeys } from '../../crypto/sealed-box.js';
import { AppError } from '../../errors.js';
import type { MailStatus, OutboxMail } from '../../mail/model.js';
import { MailService } from '../../mail/service.js';
import { FOLDER_MAIL_CONTEXT, type FolderMail, folderTransport, outboxFolder, sealedMailFile } from '../../mail/transports.js';
import { mailFrom } from '../../mail/from-address.js';
import type { Db } from '../../store/db.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { createStore } from '../../store/index.js';
import { UsageError } from '../usage-error.js';
import { configuredEngine, openConfiguredDb, requireCurrentSchema } from './open-db.js';

const STATUSES: readonly MailStatus[] = ['queued', 'sending', 'sent', 'failed'];

export interface MailCommandLine {
  action: 'list' | 'show';
  id: string | null;
  status: MailStatus | null;
  limit: number;
}

export function mailCommandLine(args: string[]): MailCommandLine {
  let parsed: ReturnType<typeof parse>;
  const parse = () => parseArgs({ args, allowPositionals: true, strict: true, options: { status: { type: 'string' }, limit: { type: 'string' } } });
  try {
    parsed = parse();
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; see gatehouse mail --help`);
  }
  const [action = 'list', id, ...extra] = parsed.positionals;
  if (action !== 'list' && action !== 'show')
    throw new UsageError(`unknown action ${JSON.stringify(action)}: use gatehouse mail list, or gatehouse mail show ID`);
  if (action === 'show' && id === undefined) throw new UsageError('gatehouse mail show needs the message id (gatehouse mail lists them)');
  const more = action === 'list' ? [id, ...extra] : extra;
  if (more[0] !== undefined) throw new UsageError(`unexpected ${JSON.stringify(more[0])}: see gatehouse mail --help`);
  const status = parsed.values.status ?? null;
  if (status !== null && !STATUSES.includes(status as MailStatus))
    throw new UsageError(`--status ${JSON.stringify(status)} is not a state: use queued, sending, sent or failed`);
  const limit = parsed.values.limit === undefined ? 50 : Number(parsed.values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  return { action, id: id ?? null, status: status as MailStatus | null, limit };
}

/** The messages of the outbox folder, newest first. */
export function folderMail(dataDir: string): FolderMail[] {
  const dir = outboxFolder(dataDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => {
      try {
        return [JSON.parse(readFileSync(join(dir, f), 'utf8')) as FolderMail];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.writtenAt.localeCompare(a.writtenAt));
}

export async function mailCommand(config: Config, args: string[]): Promise<number> {
  const line = mailCommandLine(args);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  if (line.action === 'show' && line.id !== null && /^[0-9a-f-]{36}$/i.test(line.id)) {
    const file = sealedMailFile(config.dataDir, line.id.toLowerCase());
    if (existsSync(file)) {
      const box = new SealedBox(resolveEncryptionKeys(config.encryptionKeys, config.dataDir, configuredEngine(config)));
      let text: string;
      try {
        text = box.open(readFileSync(file, 'utf8').trim(), FOLDER_MAIL_CONTEXT);
      } catch (err) {
        throw new UsageError(`${file} cannot be opened with the configured GATEHOUSE_ENCRYPTION_KEY (${(err as Error).message})`);
      }
      out(`# ${file} (sealed on disk, opened here)`);
      process.stdout.write(text);
      return 0;
    }
    // written in clear by a version before the sealed folder; serve seals it at its next start
    const clear = join(outboxFolder(config.dataDir), `${line.id.toLowerCase()}.eml`);
    if (existsSync(clear)) {
      out(`# ${clear} (written in clear by an earlier version; gatehouse serve seals it at its next start)`);
      process.stdout.write(readFileSync(clear, 'utf8'));
      return 0;
    }
  }
  if (line.action === 'list' && line.status === null) {
    const written = folderMail(config.dataDir).slice(0, line.limit);
    if (config.smtpUrl === undefined || written.length > 0) {
      out(
        `outbox folder ${outboxFolder(config.dataDir)}: ${written.length === 0 ? 'empty' : `${written.length} message${written.length === 1 ? '' : 's'}, newest first`}`,
      );
      for (const m of written) out(`  ${m.id}  ${m.writtenAt}  to ${m.to}  ${JSON.stringify(m.subject)}`);
    }
  }
  let db: Db;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      out(
        `outbox table: not read: the embedded database ${config.dataDir} is in use${err.holder ? ` by ${err.holder}` : ''} (stop serve to read it; a message that failed every attempt is also in serve's log and the audit trail, action mail.failed)`,
      );
      return line.action === 'show' ? 1 : 0;
    }
    throw err;
  }
  try {
    try {
      await requireCurrentSchema(db, 'this database is empty: start `gatehouse serve` once first');
    } catch (err) {
      // the outbox folder (above) may be all there is to read
      if (line.action === 'list' && err instanceof UsageError) {
        out(`outbox table: none (${err.message})`);
        return 0;
      }
      throw err;
    }
    const box = new SealedBox(resolveEncryptionKeys(config.encryptionKeys, config.dataDir, db.engine));
    const mail = new MailService(
      createStore(db.kysely, systemClock),
      box,
      systemClock,
      folderTransport(config.dataDir, box),
      { from: mailFrom(config), replyTo: config.mailReplyTo, product: config.vendorName },
      config.smtpUrl !== undefined,
    );
    if (line.action === 'show') {
      const { mail: m, body } = await mail.show(line.id!);
      for (const row of describe(m)) out(row);
      if (body) out(`\n${body.text}`);
      else out('\n(the body is not kept once a message is sent)');
      return 0;
    }
    const rows = await mail.list(line.limit, line.status ?? undefined);
    out(`outbox table: ${rows.length === 0 ? 'empty' : `${rows.length} message${rows.length === 1 ? '' : 's'}, newest first`}`);
    for (const m of rows) {
      out(
        `  ${m.id}  ${m.createdAt.toISOString()}  ${m.status.padEnd(7)}  attempts ${m.attempts}  to ${m.to}  ${JSON.stringify(m.subject)}${m.lastError ? `  last error: ${m.lastError}` : ''}`,
      );
    }
    return 0;
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}

function describe(m: OutboxMail): string[] {
  return [
    `id          ${m.id}`,
    `to          ${m.to}`,
    `subject     ${m.subject}`,
    `template    ${m.template}`,
    `status      ${m.status}${m.sentAt ? ` (sent ${m.sentAt.toISOString()})` : ''}`,
    `attempts    ${m.attempts}${m.status === 'queued' && m.attempts > 0 ? `, next at ${m.nextAttemptAt.toISOString()}` : ''}`,
    `created     ${m.createdAt.toISOString()}`,
    ...(m.lastError ? [`last error  ${m.lastError}`] : []),
  ];
}
