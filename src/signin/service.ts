// Signing a person in (docs/users.md, "Sign-in"): e-mail first, then password, then a TOTP code
// (or a recovery code); a person without an authenticator enrols one before the session begins.
// A set-up link sets the first password. The step reached lives in the (anonymous) session, so
// no step can be skipped by posting to a later form; the session that results is a new one.
//
// Nothing says whether an address has an account: an unknown address goes on to the password
// step and fails there with the same words, after the same password-hashing work.
import { addressPrefix } from '../oauth/address-prefix.js';
import type { Principal } from '../access/principal.js';
import type { PrincipalStore } from '../access/store.js';
import { type AuditEvent, principalEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import type { Session, SignInStep } from '../sessions/model.js';
import type { IssuedSession, SessionService } from '../sessions/service.js';
import type { Transactional } from '../transaction.js';
import { emailKey } from '../users/model.js';
import { hashPassword, verifyPassword } from '../users/password.js';
import { passwordProblem } from '../users/password-policy.js';
import { canonicalRecoveryCode, hashRecoveryCode, newRecoveryCodes } from '../users/recovery-codes.js';
import { hashSetupToken, SETUP_TOKEN_PATTERN } from '../users/setup-link.js';
import { acceptTotp, newTotpSecret, type TotpSecret, totpSecret } from '../users/totp.js';
import type { SignInRecord, SignInStore } from './store.js';
import { TOTP_CONTEXT } from './reseal.js';
import { countsSince, failureKey, type FailureKind, waitSeconds } from './throttle.js';

export interface SignInStores {
  signIn: SignInStore;
  audit: AuditStore;
  principals: Pick<PrincipalStore, 'findUserPrincipal'>;
}

export type Outcome =
  /** the next form to show */
  | { kind: 'next'; step: SignInStep['step'] }
  /** the answer was wrong: say `message`, show the same form again */
  | { kind: 'failed'; message: string }
  /** too many failures: the next attempt may go ahead in `seconds` */
  | { kind: 'wait'; seconds: number }
  /** every factor passed: the new session, and the recovery codes to show once if just enrolled */
  | { kind: 'signedIn'; issued: IssuedSession; returnTo: string; recoveryCodes?: string[] }
  /** the session's sign-in state does not allow this step (start again) */
  | { kind: 'restart' }
  /** the address signs in through an SSO connection: the browser goes to its IdP */
  | { kind: 'sso'; connectionId: string };

const WRONG_PASSWORD = 'The e-mail address or the password is wrong.';
const WRONG_CODE = 'That code is not right, or it was already used. Wait for the next code and try again.';
const ENROL_CONTEXT = 'session.totp-enrolment';

export class SignInService {
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly store: Transactional<SignInStores>,
    private readonly sessions: SessionService,
    private readonly box: SealedBox,
    private readonly clock: Clock,
    private readonly settings: {
      issuer: string;
      /** the SSO connection an address signs in through, if any (sso/sign-in.ts) */
      ssoConnectionFor?: (email: string) => Promise<{ id: string } | undefined>;
    },
  ) {}

  /** Step 1: the address. Its SSO connection's IdP, if it has one; else, whatever it is, the password. */
  async email(session: Session, rawEmail: string): Promise<Outcome> {
    const key = emailKey(rawEmail);
    if (key === '' || key.length > 254) return { kind: 'failed', message: 'Enter your e-mail address.' };
    const connection = await this.settings.ssoConnectionFor?.(rawEmail);
    if (connection) {
      await this.sessions.setState(session, { ...session.state, signIn: { step: 'sso', connectionId: connection.id, email: rawEmail.trim() } });
      return { kind: 'sso', connectionId: connection.id };
    }
    const user = await this.store.signIn.findSignInRecord(key);
    await this.sessions.setState(session, { ...session.state, signIn: { step: 'password', userId: user?.id ?? '', email: rawEmail.trim() } });
    return { kind: 'next', step: 'password' };
  }

  /** Step 2: the password. */
  async password(session: Session, password: string, address: string): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'password') return { kind: 'restart' };
    const user = step.userId ? await this.store.signIn.findSignInRecordById(step.userId) : undefined;
    // throttled by the address typed, whether or not an account has it
    const account = emailKey(step.email);
    const waiting = await this.waiting(account, address);
    if (waiting) return waiting;
    // the same argon2 work whether or not the account exists
    const ok = user?.passwordHash ? await verifyPassword(user.passwordHash, password) : await this.burn(password);
    if (!(ok && user?.active)) {
      await this.fail(account, address);
      return { kind: 'failed', message: WRONG_PASSWORD };
    }
    const signIn =
      user.totpSecretSealed === null
        ? { step: 'enrol' as const, userId: user.id, since: this.clock.now().toISOString() }
        : { step: 'totp' as const, userId: user.id };
    await this.sessions.setState(session, { ...session.state, signIn });
    return { kind: 'next', step: signIn.step };
  }

  /** Step 3: a code from the authenticator app, or one of the recovery codes. */
  async secondFactor(session: Session, code: string, address: string): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'totp') return { kind: 'restart' };
    const user = await this.store.signIn.findSignInRecordById(step.userId);
    if (!user?.active || !user.totpSecretSealed) return { kind: 'restart' };
    const waiting = await this.waiting(emailKey(user.email), address);
    if (waiting) return waiting;
    const now = this.clock.now();
    let passed = false;
    if (canonicalRecoveryCode(code) !== undefined) {
      passed = await this.store.signIn.useRecoveryCode(user.id, hashRecoveryCode(code), now);
    } else {
      const secret = this.box.open(user.totpSecretSealed, TOTP_CONTEXT);
      const accepted = acceptTotp(secret, code, now, user.totpLastStep);
      // one code, one sign-in: of two requests racing with it, the database lets one through
      passed = accepted !== undefined && (await this.store.signIn.advanceTotpStep(user.id, accepted));
    }
    if (!passed) {
      await this.fail(emailKey(user.email), address);
      return { kind: 'failed', message: WRONG_CODE };
    }
    return this.finish(session, user, address);
  }

  /** The authenticator to enrol: made once per sign-in and kept, sealed, in the session until confirmed. */
  async enrolment(session: Session): Promise<TotpSecret | undefined> {
    const step = session.state.signIn;
    if (step?.step !== 'enrol') return undefined;
    const user = await this.store.signIn.findSignInRecordById(step.userId);
    if (!user?.active) return undefined;
    if (step.pendingSecret) {
      return totpSecret(this.box.open(step.pendingSecret, ENROL_CONTEXT), user.email, this.settings.issuer);
    }
    const secret = newTotpSecret(user.email, this.settings.issuer);
    await this.sessions.setState(session, { ...session.state, signIn: { ...step, pendingSecret: this.box.seal(secret.base32, ENROL_CONTEXT) } });
    return secret;
  }

  /** Confirms the enrolment with a first code; the session begins and ten recovery codes are shown once. */
  async confirmEnrolment(session: Session, code: string, address: string): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'enrol' || !step.pendingSecret) return { kind: 'restart' };
    const user = await this.store.signIn.findSignInRecordById(step.userId);
    if (!user?.active) return { kind: 'restart' };
    const waiting = await this.waiting(emailKey(user.email), address);
    if (waiting) return waiting;
    const base32 = this.box.open(step.pendingSecret, ENROL_CONTEXT);
    const now = this.clock.now();
    const accepted = acceptTotp(base32, code, now, null);
    if (accepted === undefined) {
      await this.fail(emailKey(user.email), address);
      return { kind: 'failed', message: WRONG_CODE };
    }
    const recoveryCodes = newRecoveryCodes();
    const enrolled = await this.store.transaction(async (tx) => {
      const since = new Date(step.since);
      if (!(await tx.signIn.enrolTotp(user.id, this.box.seal(base32, TOTP_CONTEXT), accepted, recoveryCodes.map(hashRecoveryCode), now, since)))
        return false;
      await tx.audit.insertEvent(userEvent(user, now, 'user.totp_enrolled'));
      return true;
    });
    // another session enrolled first, or the account was reset since this step began
    if (!enrolled) return { kind: 'restart' };
    const finished = await this.finish(session, user, address);
    return finished.kind === 'signedIn' ? { ...finished, recoveryCodes } : finished;
  }

  /** The person opened a set-up link: if it holds, the session goes to the new-password step. */
  async openSetup(session: Session, token: string): Promise<{ email: string } | undefined> {
    if (!SETUP_TOKEN_PATTERN.test(token)) return undefined;
    const found = await this.store.signIn.findSetupRecord(hashSetupToken(token));
    if (!found?.active || !found.setupExpiresAt || found.setupExpiresAt <= this.clock.now()) return undefined;
    await this.sessions.setState(session, {
      ...session.state,
      signIn: { step: 'setup', userId: found.id, setupTokenHash: hashSetupToken(token).toString('hex') },
    });
    return { email: found.email };
  }

  /** Sets the first password (the set-up link is used up) and goes on to enrol an authenticator. */
  async setPassword(session: Session, password: string, confirmation: string): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'setup') return { kind: 'restart' };
    const found = await this.store.signIn.findSetupRecord(Buffer.from(step.setupTokenHash, 'hex'));
    const now = this.clock.now();
    if (!found?.active || found.id !== step.userId || !found.setupExpiresAt || found.setupExpiresAt <= now) return { kind: 'restart' };
    if (password !== confirmation) return { kind: 'failed', message: 'The two passwords differ.' };
    const local = found.email.split('@')[0] ?? '';
    const problem = passwordProblem(password, [found.email, local, this.settings.issuer]);
    if (problem) return { kind: 'failed', message: problem };
    const hash = await hashPassword(password);
    const redeemed = await this.store.transaction(async (tx) => {
      if (!(await tx.signIn.redeemSetupLink(found.id, Buffer.from(step.setupTokenHash, 'hex'), hash, this.clock.now()))) return false;
      await tx.audit.insertEvent(userEvent(found, now, 'user.password_set'));
      return true;
    });
    if (!redeemed) return { kind: 'restart' };
    await this.sessions.setState(session, { ...session.state, signIn: { step: 'enrol', userId: found.id, since: now.toISOString() } });
    return { kind: 'next', step: 'enrol' };
  }

  /** Who a signed-in session belongs to (for the pages to show). */
  async signedInUser(session: Session): Promise<{ id: string; email: string } | undefined> {
    if (!session.userId) return undefined;
    const user = await this.store.signIn.findSignInRecordById(session.userId);
    return user?.active ? { id: user.id, email: user.email } : undefined;
  }

  /** The signed-in user as the principal its pages act as: its roles as held now, the same
   *  principal a token of this user would load (access/authenticate.ts). */
  signedInPrincipal(session: Session): Promise<Principal | undefined> {
    if (!session.userId) return Promise.resolve(undefined);
    return this.store.principals.findUserPrincipal(session.userId);
  }

  private async finish(session: Session, user: SignInRecord, address: string): Promise<Outcome> {
    const account = emailKey(user.email);
    await this.store.signIn.clearFailures(failureKey('account', `${account}|${addressPrefix(address)}`));
    await this.store.signIn.clearFailures(failureKey('accountAll', account));
    const returnTo = session.state.returnTo ?? '/console';
    const issued = await this.sessions.signIn(session, user.id, returnTo);
    return { kind: 'signedIn', issued, returnTo };
  }

  /** The failure counts of this account (the address typed) and this address. */
  private failureKeys(account: string, address: string): [FailureKind, string][] {
    const prefix = addressPrefix(address);
    return [
      ['address', failureKey('address', prefix)],
      ['account', failureKey('account', `${account}|${prefix}`)],
      ['accountAll', failureKey('accountAll', account)],
    ];
  }

  private async waiting(account: string, address: string): Promise<Outcome | undefined> {
    const now = this.clock.now();
    let seconds = 0;
    for (const [kind, key] of this.failureKeys(account, address)) {
      const f = await this.store.signIn.findFailures(key);
      if (f) seconds = Math.max(seconds, waitSeconds(kind, f.failures, f.lastFailureAt, now));
    }
    return seconds > 0 ? { kind: 'wait', seconds } : undefined;
  }

  private async fail(account: string, address: string): Promise<void> {
    const now = this.clock.now();
    for (const [, key] of this.failureKeys(account, address)) await this.store.signIn.recordFailure(key, now, countsSince(now));
  }

  /** argon2 work for an address without an account, so that timing does not tell. */
  private async burn(password: string): Promise<false> {
    this.dummyHash ??= hashPassword('gatehouse-no-such-account-password');
    await verifyPassword(await this.dummyHash, password);
    return false;
  }
}

/** A change a person makes to their own account. */
function userEvent(user: { id: string; tenantId: string }, occurredAt: Date, action: string): AuditEvent {
  return principalEvent({ kind: 'user', id: user.id }, occurredAt, user.tenantId, action, { kind: 'user', id: user.id });
}
