// A real SMTP server in the test process (smtp-server), on a loopback port: what the service
// delivers arrives here and is read back with mailparser, as a mail client would read it. It can
// refuse (a temporary 451) a number of messages, or every one, to test retries and failure.
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  parsed: ParsedMail;
  /** the envelope's recipients */
  rcptTo: string[];
  /** the session was under TLS (smtps://, or upgraded with STARTTLS) */
  secure: boolean;
}

export interface TestSmtp {
  /** smtp://127.0.0.1:PORT (or smtps://) */
  url: string;
  received: ReceivedMail[];
  /** refuse the next `n` messages with a temporary error */
  refuseNext(n: number): void;
  /** refuse every message until told otherwise */
  refuseAll(on: boolean): void;
  /** how many messages were refused */
  refused: number;
  /** waits until `n` messages arrived (or fails after `ms`) */
  waitFor(n: number, ms?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtp(opts: { tls?: { key: string; cert: string; implicit: boolean } } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let refuseCount = 0;
  let refuseAlways = false;
  const state = { refused: 0 };
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert, secure: opts.tls.implicit } : { disabledCommands: ['STARTTLS'] }),
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (refuseAlways || refuseCount > 0) {
          refuseCount = Math.max(0, refuseCount - 1);
          state.refused += 1;
          callback(Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 }));
          return;
        }
        simpleParser(Buffer.concat(chunks)).then(
          (parsed) => {
            received.push({ parsed, rcptTo: session.envelope.rcptTo.map((r) => r.address), secure: session.secure });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `${opts.tls?.implicit ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    received,
    refuseNext: (n) => {
      refuseCount = n;
    },
    refuseAll: (on) => {
      refuseAlways = on;
    },
    get refused() {
      return state.refused;
    },
    async waitFor(n, ms = 10_000) {
      const end = Date.now() + ms;
      while (received.length < n) {
        if (Date.now() > end) throw new Error(`expected ${n} messages, ${received.length} arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The set-up link in a received message's text. */
export function linkIn(mail: ReceivedMail): string {
  const m = /https?:\/\/\S+\/login\/setup\?token=[A-Za-z0-9_-]+/.exec(mail.parsed.text ?? '');
  if (!m) throw new Error(`no set-up link in: ${mail.parsed.text}`);
  return m[0];
}
