// Mail (docs/operations.md "Mail"): what the service sends, kept in an outbox table until a
// process delivers it. The types and pure rules: the states of a message, the back-off between
// attempts, the interface a use case queues mail through (in its own transaction).
import type { MailTemplate } from './templates.js';

export type MailStatus = 'queued' | 'sending' | 'sent' | 'failed';

/** One message of the outbox, without its body (sealed, and dropped once sent). */
export interface OutboxMail {
  id: string;
  /** the tenant the message is about (its audit event's tenant); null: the deployment's own */
  tenantId: string | null;
  template: string;
  to: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  /** whether the sealed body is still kept (until it is sent) */
  bodyKept: boolean;
}

/** A claimed message, with its sealed body, ready to send. */
export interface ClaimedMail extends OutboxMail {
  bodySealed: string;
}

/** A message as queued: its body rendered and sealed. */
export interface NewMail {
  id: string;
  tenantId: string | null;
  template: string;
  to: string;
  subject: string;
  bodySealed: string;
  createdAt: Date;
}

/** What is delivered: the rendered message. */
export interface MailBody {
  subject: string;
  text: string;
  html: string;
}

/** how long a sent message's row (no body: who, what, when) is kept, for `gatehouse mail` */
export const SENT_KEPT_DAYS = 7;
/** how long a failed one (sealed) is kept for the operator; its audit event stays as long as the trail */
export const FAILED_KEPT_DAYS = 30;

/** a message that failed this many attempts is `failed` (shown by `gatehouse mail`, audited) */
export const MAX_ATTEMPTS = 8;
/** a claimed message not settled by then is claimed again (its process died mid-send) */
export const LEASE_MS = 5 * 60_000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 60 * 60_000;

/** How long after its `attempts`-th failed attempt a message is tried again: 30 s, doubling, at
 *  most an hour (the eight attempts span about an hour). */
export function retryDelayMs(attempts: number): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/** The sealing context of a message's body: bound to its row, so a body cannot be moved to another. */
export function bodyContext(id: string): string {
  return `mail.body:${id}`;
}

/** A message to queue: a template, its data, the recipient. */
export interface OutgoingMail {
  to: string;
  /** the tenant it is about: its name is in the message, its audit trail records a failure */
  tenantId: string | null;
  tenantName: string;
  mail: MailTemplate;
}

/**
 * How a use case sends mail: queued in its own transaction (a rolled-back change sends nothing),
 * delivered later by whichever process claims it. `delivers`: whether mail leaves this machine
 * (an SMTP server is configured); without one it goes to the outbox folder of the data folder.
 */
export interface MailSender {
  readonly delivers: boolean;
  send(tx: { mail: { insertMail(mail: NewMail): Promise<void> } }, mail: OutgoingMail): Promise<string>;
}

/** An error's words for the outbox and the log: one line, no more than 500 characters, never the body. */
export function errorLine(err: unknown): string {
  const e = err as { message?: unknown; responseCode?: unknown; code?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.responseCode === 'number' ? `${e.responseCode} ` : typeof e?.code === 'string' ? `${e.code}: ` : '';
  return (code + message).replace(/\s+/g, ' ').slice(0, 500);
}
