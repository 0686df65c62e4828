// A person changes their own address from the account page (docs/users.md "Changing one's
// address"). Asked with a current code from their authenticator (a session left open does not
// let anyone move the account to their own mailbox), counted per account and per address named
// (each request mails a link). A link goes to the new address; following it, signed in as the
// account that asked, makes it the account's address. The answer to a request is the same
// whether or not another account proved the address (then nothing is mailed), so the page tells
// nobody which addresses have accounts. The new address is proven only when its link went out
// through an SMTP server: a link read from the outbox folder was relayed by the operator and
// proves nothing (users/email-proof.ts).
import { tenantNameOf } from '../tenants/display-name.js';
import { timingSafeEqual } from 'node:crypto';
import { AttemptGate, type AttemptStores } from '../attempts/gate.js';
import { principalEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, isOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import { AppError, DuplicateKeyError, type Refusal, refusal } from '../errors.js';
import type { MailSender } from '../mail/model.js';
import type { MailOutboxStore } from '../mail/store.js';
import type { Session } from '../sessions/model.js';
import type { TenantStore } from '../tenants/store.js';
import { inWords } from '../time.js';
import type { Transactional } from '../transaction.js';
import { EMAIL_TAKEN } from '../users/creation.js';
import { proveEmail } from '../users/email-proof.js';
import { checkEmail } from '../users/model.js';
import { emailConfirmUrl } from '../users/setup-link.js';
import type { UserStore } from '../users/store.js';
import type { Attempt } from './service.js';
import { ACCOUNT_CHANGED } from './model.js';
import type { SignInRecord } from './store.js';

export interface EmailChangeStores extends AttemptStores {
  users: Pick<UserStore, 'lockUser' | 'findProvenUser' | 'findPendingEmail' | 'setPendingEmail' | 'changeEmail' | 'proveEmail'>;
  audit: AuditStore;
  mail: Pick<MailOutboxStore, 'insertMail'>;
  tenants: Pick<TenantStore, 'findTenant'>;
}

export interface EmailChangeSettings {
  baseUrl: string;
  /** how long the link works (as a set-up link) */
  linkTtlSeconds: number;
}

/** The signed-in person confirmed by a current code (SignInService.confirmedByCode). */
export type ConfirmedByCode = (session: Session, code: string, attempt: Attempt) => Promise<{ kind: 'confirmed'; user: SignInRecord } | Refusal>;

const INVALID_LINK =
  'This confirmation link does not work: it was used, it expired, a newer one replaced it, or it is for another account. Ask again on your account page.';
const GAVE_WAY =
  'Another account proved your current address first, so this account can no longer change it or sign in. Ask your administrator: they see why on your account’s page.';
const PROVEN_ELSEWHERE = 'Another account has proven this address since you asked, so it cannot become yours. Ask again with another address.';

export class EmailChangeService {
  private readonly gate: AttemptGate;

  constructor(
    private readonly store: Transactional<EmailChangeStores>,
    private readonly clock: Clock,
    private readonly settings: EmailChangeSettings,
    private readonly mailer: MailSender,
    private readonly confirmedByCode: ConfirmedByCode,
  ) {
    this.gate = new AttemptGate(store, clock);
  }

  /**
   * Asks that the signed-in person's address become `form.email`: a link mailed to it, valid as
   * long as a set-up link; a newer request replaces it. Refused: not an address, the address they
   * have, a wrong code, too many requests.
   */
  async request(
    session: Session,
    form: { email: string; code: string },
    attempt: Attempt,
  ): Promise<{ kind: 'requested'; email: string; expiresAt: Date } | Refusal> {
    let asked: { email: string; key: string };
    try {
      asked = checkEmail(form.email);
    } catch (err) {
      if (err instanceof AppError) return refusal(400, `${err.message}: enter the new address.`);
      throw err;
    }
    const confirmed = await this.confirmedByCode(session, form.code, attempt);
    if (confirmed.kind === 'refused') return confirmed;
    const { user } = confirmed;
    if (asked.key === user.emailNormalized) return refusal(400, `${asked.email} is your address already.`);
    const reservation = await this.gate.reserve([['emailChange', user.id]]);
    if (reservation.kind === 'wait') {
      return refusal(429, `You asked for too many address changes. Try again in ${inWords(reservation.seconds)}.`, {
        retryAfter: reservation.seconds,
      });
    }
    // the address's own count refuses quietly: a 429 would let anyone keep its owner from it, and
    // tell that others named it (the request is answered and recorded as any other, unmailed)
    const mailable = (await this.gate.reserve([['emailChangeTo', asked.key]])).kind === 'reserved';
    const token = newOpaqueToken();
    const requested = await this.store.transaction(async (tx) => {
      const locked = await tx.users.lockUser(user.id);
      if (locked?.status !== 'active') return undefined;
      const now = this.clock.now();
      const expiresAt = new Date(now.getTime() + this.settings.linkTtlSeconds * 1000);
      // proven by another account: recorded as any request (the page reads the same), mailed never
      const owner = await tx.users.findProvenUser(asked.key);
      const mailed = mailable && (owner === undefined || owner.id === user.id);
      // a request that is not mailed does not replace a link already mailed for the same address
      // and still valid (the person asking again keeps the one they have)
      const waiting = mailed ? undefined : await tx.users.findPendingEmail(user.id);
      const keepsWaiting = waiting?.mailed && waiting.expiresAt > now && checkEmail(waiting.email).key === asked.key;
      if (!keepsWaiting) {
        await tx.users.setPendingEmail(
          user.id,
          { email: asked.email, tokenHash: digestOpaqueToken(token), expiresAt, mailed: this.mailer.delivers && mailed },
          now,
        );
      }
      // about the same work whether or not it goes out (rendered and sealed; then queued, or
      // dropped), so that the time of the answer does not tell either
      const discard = { mail: { insertMail: async () => undefined } };
      await this.mailer.send(mailed ? tx : discard, {
        to: asked.email,
        tenantId: user.tenantId,
        tenantName: await tenantNameOf(tx.tenants, user.tenantId),
        mail: {
          template: 'email_change',
          confirmUrl: emailConfirmUrl(this.settings.baseUrl, token),
          expiresAt,
          currentEmail: locked.email,
        },
      });
      await tx.audit.insertEvent(
        principalEvent(
          { kind: 'user', id: user.id },
          now,
          user.tenantId,
          'user.email_change_requested',
          { kind: 'user', id: user.id },
          {
            email: locked.email,
            new_email: asked.email,
          },
        ),
      );
      return { kind: 'requested' as const, email: asked.email, expiresAt };
    });
    return requested ?? refusal(400, ACCOUNT_CHANGED);
  }

  /** What the link will do, when it is the signed-in person's pending one: nothing is changed. */
  async preview(session: Session, token: string): Promise<{ kind: 'pending'; email: string } | Refusal> {
    if (!session.userId || !isOpaqueToken(token)) return refusal(400, INVALID_LINK);
    const pending = await this.store.users.findPendingEmail(session.userId);
    if (!pending || pending.expiresAt <= this.clock.now() || !timingSafeEqual(pending.tokenHash, digestOpaqueToken(token)))
      return refusal(400, INVALID_LINK);
    return { kind: 'pending', email: pending.email };
  }

  /** The new address the signed-in person asked for and has not confirmed yet. */
  async pending(session: Session): Promise<{ email: string; expiresAt: Date } | undefined> {
    if (!session.userId) return undefined;
    const pending = await this.store.users.findPendingEmail(session.userId);
    return pending && pending.expiresAt > this.clock.now() ? { email: pending.email, expiresAt: pending.expiresAt } : undefined;
  }

  /**
   * The person followed the link mailed to their new address, signed in as the account that
   * asked: the address becomes theirs (proven when the link was mailed through an SMTP server, and
   * then any account elsewhere that had it unproven gives way), and the old address is told.
   */
  async confirm(session: Session, token: string, attempt?: Attempt): Promise<{ kind: 'changed'; email: string; proven: boolean } | Refusal> {
    if (!session.userId || !isOpaqueToken(token)) return refusal(400, INVALID_LINK);
    const userId = session.userId;
    try {
      return await this.store.transaction(async (tx) => {
        const user = await tx.users.lockUser(userId);
        if (user?.status !== 'active') return refusal(400, ACCOUNT_CHANGED);
        const pending = await tx.users.findPendingEmail(user.id);
        const now = this.clock.now();
        if (!pending || pending.expiresAt <= now || !timingSafeEqual(pending.tokenHash, digestOpaqueToken(token))) return refusal(400, INVALID_LINK);
        const { email, key } = checkEmail(pending.email);
        // proven elsewhere since it was asked for (through SSO, or a mailed link): it cannot be
        // this account's, mailed link or not; and an account that gave way does not come back
        if (user.emailStatus === 'claimed_elsewhere') return refusal(400, GAVE_WAY);
        const owner = await tx.users.findProvenUser(key);
        if (owner && owner.id !== user.id) return refusal(400, PROVEN_ELSEWHERE);
        await tx.users.changeEmail(user.id, email, key, now);
        const self = { kind: 'user' as const, id: user.id };
        await tx.audit.insertEvent(
          principalEvent(self, now, user.tenantId, 'user.email_changed', self, { email: user.email, new_email: email, proven: pending.mailed }),
        );
        if (pending.mailed) await proveEmail(tx, { id: user.id, tenantId: user.tenantId, email, emailNormalized: key }, 'email_change', self, now);
        // the old address is told (the new one just proved itself): whoever took over a session
        // and moved the account to their own address does not go unnoticed
        await this.mailer.send(tx, {
          to: user.email,
          tenantId: user.tenantId,
          tenantName: await tenantNameOf(tx.tenants, user.tenantId),
          mail: { template: 'email_changed', at: now, by: 'self', detail: email, address: attempt?.address, userAgent: attempt?.userAgent },
        });
        return { kind: 'changed' as const, email, proven: pending.mailed };
      });
    } catch (err) {
      if (err instanceof DuplicateKeyError && err.key === 'user.email')
        return refusal(400, `${EMAIL_TAKEN} in your organisation: ask again with another address.`);
      if (err instanceof DuplicateKeyError && err.key === 'user.provenEmail') return refusal(400, PROVEN_ELSEWHERE);
      throw err;
    }
  }
}
