// Where a message goes when it is delivered: an SMTP server (GATEHOUSE_SMTP_URL, through
// nodemailer: `smtp://` upgrades with STARTTLS when the server offers it, `smtps://` is TLS from
// the start), or, with none configured (the embedded default), a file per message in the data
// folder's `outbox` folder, which `gatehouse mail show` prints. A message there may carry a live
// link (a set-up or reset link): it is sealed (crypto/sealed-box.ts, the service's keys), never
// written in clear; beside it, what `gatehouse mail` lists (to, subject: no secret).
import { chmodSync, existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { SealedBox } from '../crypto/sealed-box.js';

/** A nodemailer transport, made at the first message (nodemailer's import is not paid at start). */
function lazily<T extends Transporter>(
  make: (mailer: typeof import('nodemailer').default) => T,
): { get: () => Promise<T>; made: () => T | undefined } {
  let made: T | undefined;
  let making: Promise<T> | undefined;
  return {
    get: () => {
      making ??= import('nodemailer').then(
        (m) => {
          made = make(m.default);
          return made;
        },
        (err: unknown) => {
          // not kept: the next message tries again
          making = undefined;
          throw err;
        },
      );
      return making;
    },
    made: () => made,
  };
}

export interface Envelope {
  /** the outbox row's id: the file's name, and the Message-ID's left part */
  id: string;
  from: string;
  replyTo: string | undefined;
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  /** where mail goes, for the log and `gatehouse mail` (never the URL's password) */
  readonly describe: string;
  deliver(envelope: Envelope): Promise<void>;
  close(): void;
}

/** The SMTP server of `url`; `tls` adds TLS options (tests trust their own certificate). */
export function smtpTransport(url: string, tls?: { rejectUnauthorized?: boolean }): MailTransport {
  const parsed = new URL(url);
  const options: SMTPTransport.Options = {
    host: parsed.hostname,
    port: parsed.port === '' ? (parsed.protocol === 'smtps:' ? 465 : 587) : Number(parsed.port),
    secure: parsed.protocol === 'smtps:',
    ...(parsed.username ? { auth: { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) } } : {}),
    // a slow server must not hold a delivery run past the lease (mail/model.ts LEASE_MS)
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 60_000,
    ...(tls ? { tls } : {}),
  };
  const transporter = lazily((mailer) => mailer.createTransport(options));
  return {
    describe: `${parsed.protocol}//${parsed.host}`,
    async deliver(e) {
      await (await transporter.get()).sendMail(message(e));
    },
    close: () => transporter.made()?.close(),
  };
}

/** The sealing context of a message in the outbox folder. */
export const FOLDER_MAIL_CONTEXT = 'mail-outbox-folder';

/** A message of the outbox folder: `<id>.eml.sealed` (the RFC 822 message, sealed). */
export const sealedMailFile = (dataDir: string, id: string) => join(outboxFolder(dataDir), `${id}.eml.sealed`);

/** The outbox folder `<dataDir>/outbox`: one sealed `.eml.sealed` file per message, readable by the owner only. */
export function folderTransport(dataDir: string, box: Pick<SealedBox, 'seal'>): MailTransport {
  const dir = outboxFolder(dataDir);
  const builder = lazily((mailer) => mailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
  return {
    describe: `the folder ${dir}`,
    async deliver(e) {
      const built = await (await builder.get()).sendMail(message(e));
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await writeFile(sealedMailFile(dataDir, e.id), `${box.seal((built.message as Buffer).toString('utf8'), FOLDER_MAIL_CONTEXT)}\n`, {
        mode: 0o600,
      });
      // what `gatehouse mail` lists, without opening the message (no secret: a link is in the sealed message only)
      const summary: FolderMail = { id: e.id, to: e.to, subject: e.subject, writtenAt: new Date().toISOString() };
      await writeFile(join(dir, `${e.id}.json`), `${JSON.stringify(summary)}\n`, { mode: 0o600 });
    },
    close: () => undefined,
  };
}

/**
 * Seals the messages an earlier version wrote to the outbox folder in clear (`<id>.eml`): each
 * becomes `<id>.eml.sealed` and the clear file is removed. At start, before anything is delivered;
 * the number sealed.
 */
export function sealClearFolderMail(dataDir: string, box: Pick<SealedBox, 'seal'>): number {
  const dir = outboxFolder(dataDir);
  if (!existsSync(dir)) return 0;
  chmodSync(dir, 0o700);
  let sealed = 0;
  for (const name of readdirSync(dir)) {
    const id = /^([0-9a-f-]{36})\.eml$/.exec(name)?.[1];
    if (!id) continue;
    const clear = join(dir, name);
    try {
      writeFileSync(sealedMailFile(dataDir, id), `${box.seal(readFileSync(clear, 'utf8'), FOLDER_MAIL_CONTEXT)}\n`, { mode: 0o600 });
      unlinkSync(clear);
      sealed++;
    } catch {
      // one that cannot be read or written stays as it was: `gatehouse mail show` still reads it
    }
  }
  return sealed;
}

/** What the outbox folder says of a message beside it (`<id>.json`). */
export interface FolderMail {
  id: string;
  to: string;
  subject: string;
  writtenAt: string;
}

/** The outbox folder of a data folder. */
export function outboxFolder(dataDir: string): string {
  return join(resolve(dataDir), 'outbox');
}

function message(e: Envelope) {
  const domain = /@([^>\s]+)>?\s*$/.exec(e.from)?.[1] ?? 'gatehouse.invalid';
  return {
    from: e.from,
    ...(e.replyTo ? { replyTo: e.replyTo } : {}),
    to: e.to,
    subject: e.subject,
    text: e.text,
    html: e.html,
    messageId: `<${e.id}@${domain}>`,
  };
}
