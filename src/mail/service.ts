// The outbox (docs/operations.md "Mail"): `send` queues a message in the caller's transaction,
// rendered and sealed (it may carry a one-time link); `deliverDue`, run by the mail job of every
// process, claims what is due and hands it to the transport. A message that fails is tried again
// with back-off (mail/model.ts); after MAX_ATTEMPTS it is `failed`: kept sealed, audited, logged
// (never its body), and listed by `gatehouse mail`. A sent message's body is dropped.
import { randomUUID } from 'node:crypto';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import { badInput, notFound } from '../errors.js';
import type { Transactional } from '../transaction.js';
import { UUID_PATTERN } from '../ids.js';
import {
  bodyContext,
  type ClaimedMail,
  errorLine,
  FAILED_KEPT_DAYS,
  LEASE_MS,
  MAX_ATTEMPTS,
  type MailBody,
  type MailSender,
  type MailStatus,
  type OutboxMail,
  type OutgoingMail,
  retryDelayMs,
  SENT_KEPT_DAYS,
} from './model.js';
import type { MailOutboxStore } from './store.js';
import { renderMail } from './templates.js';
import type { MailTransport } from './transports.js';

export interface MailStores {
  mail: MailOutboxStore;
  audit: Pick<AuditStore, 'insertEvent'>;
}

export interface MailSettings {
  /** the From header */
  from: string;
  replyTo: string | undefined;
  /** the product's name in every message (GATEHOUSE_VENDOR_NAME) */
  product: string;
}

/** What a delivery run did; `failed` names the messages that failed for good (for the log line). */
export interface DeliveryRun {
  sent: number;
  retried: number;
  failed: { id: string; template: string; attempts: number; error: string }[];
}

/** messages one run claims at most: a run stays well within its lease */
const BATCH = 20;
/** the tenant whose trail records a failed message about no tenant */
const ROOT_TENANT = '1';

export class MailService implements MailSender {
  constructor(
    private readonly store: Transactional<MailStores>,
    private readonly box: SealedBox,
    private readonly clock: Clock,
    private readonly transport: MailTransport,
    private readonly settings: MailSettings,
    /** an SMTP server is configured (else the outbox folder) */
    readonly delivers: boolean,
  ) {}

  /** where mail goes (for the start-up log and `gatehouse mail`) */
  get destination(): string {
    return this.transport.describe;
  }

  async send(tx: { mail: Pick<MailOutboxStore, 'insertMail'> }, m: OutgoingMail): Promise<string> {
    const id = randomUUID();
    const body = renderMail(m.mail, { product: this.settings.product, tenantName: m.tenantName });
    await tx.mail.insertMail({
      id,
      tenantId: m.tenantId,
      template: m.mail.template,
      to: m.to,
      subject: body.subject,
      bodySealed: this.box.seal(JSON.stringify({ text: body.text, html: body.html }), bodyContext(id)),
      createdAt: this.clock.now(),
    });
    return id;
  }

  /** Delivers the messages due now, one run of the mail job. */
  async deliverDue(limit = BATCH): Promise<DeliveryRun> {
    const now = this.clock.now();
    const claimed = await this.store.mail.claimDue(now, new Date(now.getTime() + LEASE_MS), limit);
    const run: DeliveryRun = { sent: 0, retried: 0, failed: [] };
    for (const mail of claimed) {
      try {
        const body = this.body(mail);
        await this.transport.deliver({
          id: mail.id,
          from: this.settings.from,
          replyTo: this.settings.replyTo,
          to: mail.to,
          subject: mail.subject,
          ...body,
        });
        await this.store.mail.markSent(mail.id, this.clock.now());
        run.sent += 1;
      } catch (err) {
        const error = errorLine(err);
        if (mail.attempts < MAX_ATTEMPTS) {
          await this.store.mail.markRetry(mail.id, new Date(this.clock.now().getTime() + retryDelayMs(mail.attempts)), error);
          run.retried += 1;
        } else {
          await this.failed(mail, error);
          run.failed.push({ id: mail.id, template: mail.template, attempts: mail.attempts, error });
        }
      }
    }
    return run;
  }

  /** Forgets sent messages after SENT_KEPT_DAYS and failed ones after FAILED_KEPT_DAYS; how many. */
  async purge(): Promise<number> {
    const now = this.clock.now().getTime();
    return (
      (await this.store.mail.deleteMailBefore('sent', new Date(now - SENT_KEPT_DAYS * 86_400_000))) +
      (await this.store.mail.deleteMailBefore('failed', new Date(now - FAILED_KEPT_DAYS * 86_400_000)))
    );
  }

  /** The outbox, newest first (`gatehouse mail`). */
  list(limit: number, status?: MailStatus): Promise<OutboxMail[]> {
    return this.store.mail.listMail(limit, status);
  }

  /** One message, and its body while it is kept (until sent) (`gatehouse mail show`). */
  async show(id: string): Promise<{ mail: OutboxMail; body: MailBody | undefined }> {
    if (!UUID_PATTERN.test(id)) throw badInput(`${JSON.stringify(id)} is not a message id (a UUID, as gatehouse mail lists them)`, { field: 'id' });
    const found = await this.store.mail.findMail(id.toLowerCase());
    if (!found) throw notFound(`Message ${id}`);
    const { bodySealed, ...mail } = found;
    return { mail, body: bodySealed === null ? undefined : { subject: mail.subject, ...this.open(mail.id, bodySealed) } };
  }

  close(): void {
    this.transport.close();
  }

  private body(mail: ClaimedMail): { text: string; html: string } {
    return this.open(mail.id, mail.bodySealed);
  }

  private open(id: string, sealed: string): { text: string; html: string } {
    return JSON.parse(this.box.open(sealed, bodyContext(id))) as { text: string; html: string };
  }

  private async failed(mail: ClaimedMail, error: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      await tx.mail.markFailed(mail.id, error);
      await tx.audit.insertEvent({
        occurredAt: this.clock.now(),
        tenantId: mail.tenantId ?? ROOT_TENANT,
        actor: { kind: 'system', id: 'mail' },
        action: 'mail.failed',
        outcome: 'failure',
        target: { kind: 'mail', id: mail.id },
        details: { template: mail.template, to: mail.to, attempts: mail.attempts, error },
      });
    });
  }
}
