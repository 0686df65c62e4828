// Signing a person in (docs/users.md, "Sign-in"): e-mail first, then password, then a TOTP code
// (or a recovery code); a person without an authenticator enrols one before the session begins.
// An address of an SSO connection goes to its identity provider instead (docs/sso.md; the SAML
// half is sso/sign-in.ts). A set-up link sets the first password. The step reached lives in the
// (anonymous) session, and this service is the only writer of it: the pages post a form to
// `submit`, which answers the step the session is at, so no step can be skipped by posting to a
// later form. Every step that raises trust (a password passed, a set-up link opened or used) goes
// on under a new session id, and the session that results from the last factor is a new one too.
// A refusal is returned as a value (errors.ts, Refusal), as every browser flow's is.
//
// A passkey (webauthn.ts; docs/users.md "Passkeys") answers the code step in place of a code, or,
// at the e-mail or password step, signs a person in without a password (verified by the
// authenticator, it counts as both factors). Its challenge lives in the session until answered,
// once; its attempts are counted as codes are.
// A forgotten password (docs/users.md "Forgotten password"): `requestReset` mails a one-time reset
// link to an account that signs in with a password (a mail saying how it signs in to one without,
// nothing to an address without an account), and answers the same, in the same time, whatever the
// address; `openReset` and the 'reset' step set a new password; the second factor stays.
// Every change of a password, authenticator or recovery codes queues a notice to the person in its
// own transaction (mail/templates.ts, Notice).
//
// Nothing says whether an address has an account: an unknown address goes on to the password
// step and fails there with the same words, after the same password-hashing work, under the same
// counts. Every guess (password, code) is counted before it is checked (attempts/gate.ts), so no
// number of guesses made at once gets more checked than the counts allow.
import { tenantNameOf } from '../tenants/display-name.js';
import { AttemptGate, type AttemptKeys, type AttemptStores, type Reservation } from '../attempts/gate.js';
import type { AttemptKind } from '../attempts/model.js';
import { ATTEMPT_RULES, attemptKey, BROWSER_CEILING, isStale } from '../attempts/model.js';
import { ROOT_TENANT_ID } from '../access/roles.js';
import type { Principal } from '../access/principal.js';
import type { PrincipalStore } from '../access/store.js';
import { type AuditEvent, principalEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, isOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import type { SealedBox } from '../crypto/sealed-box.js';
import { DuplicateKeyError, type Refusal, refusal } from '../errors.js';
import { addressPrefix } from '../oauth/address-prefix.js';
import type { IssuedSession, Session, SessionLifecycle, SessionState, SignInFor, SignInStep } from '../sessions/model.js';
import type { Transactional } from '../transaction.js';
import { emailKey } from '../users/model.js';
import { argon2Hasher, type PasswordHasher } from '../users/password.js';
import { passwordProblem } from '../users/password-policy.js';
import { canonicalRecoveryCode, hashRecoveryCode, newRecoveryCodes } from '../users/recovery-codes.js';
import { acceptTotp, newTotpSecret, type TotpSecret, totpSecret } from '../users/totp.js';
import type { MailSender } from '../mail/model.js';
import type { MailOutboxStore } from '../mail/store.js';
import type { NoticeBy, NoticeTemplate } from '../mail/templates.js';
import type { TenantStore } from '../tenants/store.js';
import { resetUrl } from '../users/setup-link.js';
import { RECOGNISED_DAYS } from './recognised-browser.js';
import { ACCOUNT_CHANGED, CLAIMED_ELSEWHERE, ENROL_CONTEXT, TOTP_CONTEXT } from './model.js';
import type { SessionStore } from '../sessions/store.js';
import type { Passkey, PasskeyStore, SignInRecord, SignInStore } from './store.js';
import {
  authenticationOptions,
  challengeHolds,
  checkAuthentication,
  checkRegistration,
  newChallenge,
  PASSKEY_NAME_MAX,
  PASSKEY_PROMPT_MS,
  postedCredential,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RelyingParty,
  registrationOptions,
  relyingParty,
  userHandleMatches,
} from './webauthn.js';
import { randomUUID } from 'node:crypto';
import { nameProblem } from '../text.js';
import { inWords } from '../time.js';
import { proveEmail } from '../users/email-proof.js';
import type { UserStore } from '../users/store.js';
import { UUID_PATTERN } from '../ids.js';

/** how long a new authenticator waits, in its session, for its first code (then: start again) */
export const REENROL_TTL_MS = 10 * 60_000;

export interface SignInStores extends AttemptStores {
  signIn: SignInStore;
  /** a mailed set-up link, used, proves the address (users/email-proof.ts) */
  users: Pick<UserStore, 'proveEmail'>;
  passkeys: PasskeyStore;
  audit: AuditStore;
  /** a changed password or authenticator ends the person's other sessions */
  sessions: Pick<SessionStore, 'deleteOtherUserSessions' | 'deleteUserSessions'>;
  principals: Pick<PrincipalStore, 'findUserPrincipal'>;
  /** reset links and notices are queued in the change's transaction */
  mail: Pick<MailOutboxStore, 'insertMail'>;
  tenants: Pick<TenantStore, 'findTenant'>;
}

export interface SignInSettings {
  /** the product's name (TOTP issuer) */
  issuer: string;
  /** the service's public address, for the links mailed */
  baseUrl: string;
  /** how long a password reset link works (GATEHOUSE_PASSWORD_RESET_TTL) */
  resetTtlSeconds: number;
}

/** A reset request is answered no sooner than this after it arrived, whatever the address: the
 *  work for an account (a link stored, a mail queued) takes a few milliseconds that an address
 *  without one does not, and the answer must not tell them apart. */
export const RESET_ANSWER_MS = 300;

/** Who is making an attempt: the client address, and the browser's recognition cookie if it sent one. */
export interface Attempt {
  address: string;
  browser?: string | undefined;
  /** the request's id, for the audit event of the attempt */
  requestId?: string | undefined;
  /** the browser's User-Agent, for the notices of a change (cut to 200 characters) */
  userAgent?: string | undefined;
}

/** A sign-in form as posted: the fields of whichever step's form (`submit` reads the step's). */
export interface SignInForm {
  email?: string;
  password?: string;
  confirmation?: string;
  code?: string;
}

export type Outcome =
  /** the next form to show; `issued` when the step raised trust and the session has a new id */
  | { kind: 'next'; step: SignInStep['step']; issued?: IssuedSession }
  /** every factor passed: the new session, the browser's recognition cookie (new or as it was),
   *  and the recovery codes to show once if just enrolled */
  | { kind: 'signedIn'; issued: IssuedSession; returnTo: string; browser: string; recoveryCodes?: string[] }
  /** a reset link set a new password: the session is back at the e-mail step (sign in with it) */
  | { kind: 'passwordReset' }
  /** the session's sign-in state does not allow this step (start again) */
  | { kind: 'restart' }
  /** the address signs in through an SSO connection: the browser goes to its IdP */
  | { kind: 'sso'; connectionId: string }
  /** the same form again, with the refusal's words: 400 a wrong answer, 429 too many attempts
   *  (the next may go ahead in `retryAfter` seconds); from chooseSso, 403/404 a connection that
   *  cannot sign anyone in now */
  | Refusal;

/** The SAML half of a sign-in (sso/sign-in.ts, SsoSignInService): the connection an address signs
 *  in through, and the way to its identity provider. */
export interface SsoSignInHalf {
  connectionFor(email: string): Promise<{ id: string } | undefined>;
  usableName(connectionId: string): Promise<{ kind: 'usable'; name: string } | Refusal>;
  start(connectionId: string, session: Session, email: string | null): Promise<{ kind: 'idp'; url: string } | Refusal>;
}

/** Where the GET of a connection's sign-in address leads. */
export type SsoContinuation =
  /** on to the identity provider */
  | { kind: 'idp'; url: string }
  /** this session did not ask for this connection: the person confirms first (named) */
  | { kind: 'confirm'; name: string }
  | Refusal;

/** What opening a password reset link comes to. */
export type ResetOpening =
  /** the link does not hold (used, expired, replaced, the password changed since, the account disabled) */
  | { kind: 'invalid' }
  /** this browser is signed in: the person signs out first, then opens the link again */
  | { kind: 'signedIn'; signedInAs: string }
  /** a new anonymous session at the reset step */
  | { kind: 'next'; issued: IssuedSession };

/** What opening a set-up link comes to. */
export type SetupOpening =
  /** the link does not hold (used, expired, mistyped, its user disabled) */
  | { kind: 'invalid' }
  /** another account proved the link's address first: this account gave way (docs/users.md) */
  | { kind: 'claimed' }
  /** this browser is signed in as someone: they confirm first (the link is kept in their session) */
  | { kind: 'confirm'; signedInAs: string; setupFor: string }
  /** a new anonymous session at the new-password step */
  | { kind: 'next'; issued: IssuedSession };

const WRONG_PASSWORD = 'The e-mail address or the password is wrong.';
const WRONG_CODE = 'That code is not right, or it was already used. Wait for the next code and try again.';
const WRONG_RECOVERY_CODE = 'That recovery code is not right, or it was already used. Each recovery code works once; try another one.';
const PASSKEY_EXPIRED = 'This passkey request expired or was already answered. Try again: your browser asks for the passkey anew.';
const PASSKEY_NO_ANSWER = 'No answer from a passkey came with the form. Use the passkey button again, and complete what your browser asks.';
const PASSKEY_UNKNOWN =
  'This passkey is not registered here: it was removed, or it is for another service. Sign in with your password and authenticator code instead.';
const PASSKEY_NOT_THIS_ACCOUNT = "This passkey is another account's. Use the passkey of the account you are signing in to, or your code.";
const PASSKEY_INVALID = "The passkey's answer was not valid for this site (made for another address, or altered). Try again, or use your code.";
const PASSKEY_NOT_VERIFIED =
  'Your passkey did not verify you (no PIN, fingerprint or face was checked). Use a passkey that asks for one, or sign in with your password and code.';
const PASSKEY_CLONED =
  'This passkey was refused: its signature counter went backwards, a sign that it was copied to another device. Sign in with your password and authenticator code, then remove this passkey on your account page and add it again. Your administrators can see the event.';
/** where a sign-in with a recovery code lands when it was going nowhere in particular */
const ACCOUNT_PAGE = '/console/account';
/** where a sign-in was going, if anywhere */
const goingTo = (session: Session): string | undefined => session.state.returnTo;
const RESET_LINK_GONE =
  'This password reset link no longer works: it was used, it expired, a newer one replaced it, or the password was changed since. Ask for a new one with "Forgot your password?".';
/** looked up in place of an account that does not exist, so that it costs the same reads */
const NO_USER = '00000000-0000-0000-0000-000000000000';

export class SignInService {
  private dummyHash: Promise<string> | undefined;
  private readonly gate: AttemptGate;
  /** undefined when the base URL's host is an IP address: no passkeys then */
  private readonly rp: RelyingParty | undefined;

  constructor(
    private readonly store: Transactional<SignInStores>,
    private readonly sessions: SessionLifecycle,
    private readonly sso: SsoSignInHalf,
    private readonly box: SealedBox,
    private readonly clock: Clock,
    private readonly settings: SignInSettings,
    private readonly mailer: MailSender,
    /** every password hashed or checked here goes through it (tests count the work) */
    private readonly hasher: PasswordHasher = argon2Hasher,
  ) {
    this.gate = new AttemptGate(store, clock);
    this.rp = relyingParty(settings.baseUrl, settings.issuer);
  }

  /**
   * The anonymous session of a sign-in: the browser's own if it is one (`current`), else a new
   * one at the e-mail step, whose cookie is to be set (`issued`). `returnTo`, where to go once
   * signed in, replaces the one the session had.
   */
  async anonymous(current: Session | undefined, returnTo?: string): Promise<{ session: Session; issued?: IssuedSession }> {
    if (current && current.userId === null) {
      if (!returnTo || current.state.returnTo === returnTo) return { session: current };
      await this.sessions.patchState(current, { set: { returnTo } });
      return { session: { ...current, state: { ...current.state, returnTo } } };
    }
    // the e-mail step's passkey challenge made with the session (one insert, no update to show it)
    const passkeyChallenge = this.rp
      ? { passkeyChallenge: { challenge: newChallenge(), purpose: 'signIn' as const, userId: null, issuedAt: this.clock.now().toISOString() } }
      : {};
    const issued = await this.sessions.start({ signIn: { step: 'email' }, ...(returnTo ? { returnTo } : {}), ...passkeyChallenge });
    return { session: issued.session, issued };
  }

  /** A sign-in form was posted: the answer to the step the session is at (whatever form it was). */
  submit(session: Session, form: SignInForm, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn?.step ?? 'email';
    switch (step) {
      case 'email':
      case 'sso':
        return this.email(session, form.email ?? '');
      case 'password':
        return this.password(session, form.password ?? '', attempt);
      case 'totp':
        return this.secondFactor(session, form.code ?? '', attempt);
      case 'enrol':
        return this.confirmEnrolment(session, form.code ?? '', attempt);
      case 'setup':
        return this.setPassword(session, form.password ?? '', form.confirmation ?? '');
      case 'reset':
        return this.resetPassword(session, form.password ?? '', form.confirmation ?? '', attempt);
    }
  }

  /**
   * The person chose a connection's identity provider (its sign-in page's button, a form with the
   * session's CSRF token): the session goes to its 'sso' step, if the connection can sign anyone
   * in now.
   */
  async chooseSso(session: Session, connectionId: string): Promise<Outcome> {
    const usable = await this.sso.usableName(connectionId);
    if (usable.kind === 'refused') return usable;
    await this.sessions.patchState(session, { set: { signIn: { step: 'sso', connectionId, email: '' } } });
    return { kind: 'sso', connectionId };
  }

  /**
   * The browser asks to go to a connection's identity provider. Only a session that asked for
   * this connection (at /login, /device or by `chooseSso`: its 'sso' step) goes on; anyone else,
   * e.g. sent by a link or an IdP's app tile, confirms first: otherwise a page elsewhere could
   * start a sign-in through its own connection in a visitor's browser and have them signed in as
   * someone else (login CSRF).
   */
  async continueSso(session: Session, connectionId: string): Promise<SsoContinuation> {
    const step = session.state.signIn;
    if (step?.step !== 'sso' || step.connectionId !== connectionId) {
      const usable = await this.sso.usableName(connectionId);
      return usable.kind === 'refused' ? usable : { kind: 'confirm', name: usable.name };
    }
    const idp = await this.sso.start(connectionId, session, step.email === '' ? null : step.email);
    if (idp.kind === 'refused') return idp;
    // back at /login later (the IdP failed, the person changed their mind), the address is asked again
    await this.sessions.patchState(session, { set: { signIn: { step: 'email' } } });
    return idp;
  }

  /**
   * Begins a sign-in for one account only, named elsewhere (the address a device login was
   * started for): its SSO connection's IdP if it has one, else straight to its password, the
   * address shown and fixed. The session's step is set to the result.
   */
  beginFor(session: Session, signInFor: SignInFor, returnTo: string): Promise<Outcome> {
    return this.email(session, signInFor.email, { signInFor, returnTo });
  }

  /** Step 1: the address. Its SSO connection's IdP, if it has one; else, whatever it is, the password.
   *  `carried`: what beginFor sets with the step (written with it, only if the step is taken). */
  async email(session: Session, rawEmail: string, carried: Pick<SessionState, 'signInFor' | 'returnTo'> = {}): Promise<Outcome> {
    const key = emailKey(rawEmail);
    if (key === '' || key.length > 254) return refusal(400, 'Enter your e-mail address.');
    const signInFor = carried.signInFor ?? session.state.signInFor;
    if (signInFor && emailKey(signInFor.email) !== key) {
      return refusal(
        400,
        `This sign-in is for ${signInFor.email} only${signInFor.deviceUserCode ? ' (your command line named that account)' : ''}. Enter that address, or choose to sign in with another account below.`,
      );
    }
    const connection = await this.sso.connectionFor(rawEmail);
    if (connection) {
      await this.sessions.patchState(session, { set: { ...carried, signIn: { step: 'sso', connectionId: connection.id, email: rawEmail.trim() } } });
      return { kind: 'sso', connectionId: connection.id };
    }
    const user = await this.store.signIn.findSignInRecord(key);
    await this.sessions.patchState(session, { set: { ...carried, signIn: { step: 'password', userId: user?.id ?? '', email: rawEmail.trim() } } });
    return { kind: 'next', step: 'password' };
  }

  /** Goes back to the e-mail step (the person wants another address). A sign-in for one account
   *  stays so, unless the person gives that up (`forgetAccount`): then it is an ordinary sign-in,
   *  and where it was going (the device approval) is forgotten too. */
  async restart(session: Session, forgetAccount = false): Promise<void> {
    await this.sessions.patchState(session, { set: { signIn: { step: 'email' } }, ...(forgetAccount ? { remove: ['signInFor', 'returnTo'] } : {}) });
  }

  /** Step 2: the password. */
  async password(session: Session, password: string, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'password') return { kind: 'restart' };
    // the same reads, counts and argon2 work whether or not an account has the address typed
    const user = await this.store.signIn.findSignInRecordById(step.userId || NO_USER);
    const account = emailKey(step.email);
    const reservation = await this.gate.reserve(await this.attemptKeys(account, user, attempt, 'password'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    // One verification whatever the account: of its hash, or of the placeholder's (made with the
    // same parameters by the same hasher). The placeholder is awaited on every path, so that the
    // attempt that makes it (the first of this process) is not only an unknown address's.
    const placeholder = await this.placeholderHash();
    const ok = user?.passwordHash
      ? await this.hasher.verify(user.passwordHash, password)
      : await this.hasher.verify(placeholder, password).then(() => false);
    if (!(ok && user?.active)) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, step.email, attempt, 'password', 'failure');
      return refusal(400, WRONG_PASSWORD);
    }
    // a right password is not a failure: its attempt no longer counts
    await this.gate.release(reservation);
    const signIn =
      user.totpSecretSealed === null
        ? { step: 'enrol' as const, userId: user.id, since: this.clock.now().toISOString() }
        : { step: 'totp' as const, userId: user.id, ...(user.hasPasskeys ? { passkeys: true } : {}) };
    const issued = await this.sessions.rotate(session, { ...session.state, signIn });
    return issued ? { kind: 'next', step: signIn.step, issued } : { kind: 'restart' };
  }

  /** Step 3: a code from the authenticator app, or one of the recovery codes. */
  async secondFactor(session: Session, code: string, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'totp') return { kind: 'restart' };
    const user = await this.store.signIn.findSignInRecordById(step.userId);
    if (!user?.active || !user.totpSecretSealed) return { kind: 'restart' };
    const reservation = await this.gate.reserve(await this.attemptKeys(emailKey(user.email), user, attempt, 'code'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    const now = this.clock.now();
    const recovery = canonicalRecoveryCode(code) !== undefined;
    let passed = false;
    if (recovery) {
      passed = await this.store.signIn.useRecoveryCode(user.id, hashRecoveryCode(code), now);
    } else {
      const secret = this.box.open(user.totpSecretSealed, TOTP_CONTEXT);
      const accepted = acceptTotp(secret, code, now, user.totpLastStep);
      // one code, one sign-in: of two requests racing with it, the database lets one through
      passed = accepted !== undefined && (await this.store.signIn.advanceTotpStep(user.id, accepted));
    }
    if (!passed) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user.email, attempt, recovery ? 'recovery_code' : 'totp', 'failure');
      return refusal(400, recovery ? WRONG_RECOVERY_CODE : WRONG_CODE);
    }
    let notice: string | undefined;
    if (recovery) {
      const left = await this.store.signIn.countUnusedRecoveryCodes(user.id);
      notice =
        left === 0
          ? 'You used your last recovery code. Ask an Administrator to reset your sign-in to get new ones, before you need one again.'
          : `You used a recovery code: ${left} ${left === 1 ? 'is' : 'are'} left, each usable once. Lost your authenticator app? Replace it now under "Your authenticator" below, with one more recovery code in place of the app's code; then make new recovery codes.`;
    }
    // after a recovery code, the person lands on their account page (where the authenticator is
    // replaced), unless the sign-in was on its way somewhere (a device approval, an OAuth client)
    return this.finish(
      session,
      user,
      attempt,
      reservation,
      notice,
      { factor: 'second_factor' },
      recovery && goingTo(session) === undefined ? ACCOUNT_PAGE : undefined,
    );
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
    await this.sessions.patchState(session, { set: { signIn: { ...step, pendingSecret: this.box.seal(secret.base32, ENROL_CONTEXT) } } });
    return secret;
  }

  /** Confirms the enrolment with a first code; the session begins and ten recovery codes are shown once. */
  async confirmEnrolment(session: Session, code: string, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'enrol' || !step.pendingSecret) return { kind: 'restart' };
    const user = await this.store.signIn.findSignInRecordById(step.userId);
    if (!user?.active) return { kind: 'restart' };
    const reservation = await this.gate.reserve(await this.attemptKeys(emailKey(user.email), user, attempt, 'code'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    const base32 = this.box.open(step.pendingSecret, ENROL_CONTEXT);
    const now = this.clock.now();
    const accepted = acceptTotp(base32, code, now, null);
    if (accepted === undefined) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user.email, attempt, 'totp', 'failure');
      return refusal(400, WRONG_CODE);
    }
    const recoveryCodes = newRecoveryCodes();
    const enrolled = await this.store.transaction(async (tx) => {
      const since = new Date(step.since);
      if (!(await tx.signIn.enrolTotp(user.id, this.box.seal(base32, TOTP_CONTEXT), accepted, recoveryCodes.map(hashRecoveryCode), now, since)))
        return false;
      // no notice: a first authenticator (at set-up, or after a reset, whose own mail told the person)
      await tx.audit.insertEvent(userEvent(user, now, 'user.totp_enrolled'));
      return true;
    });
    // another session enrolled first, or the account was reset since this step began
    if (!enrolled) {
      await this.gate.release(reservation);
      return { kind: 'restart' };
    }
    const finished = await this.finish(session, user, attempt, reservation);
    return finished.kind === 'signedIn' ? { ...finished, recoveryCodes } : finished;
  }

  /**
   * A set-up link was opened. In a browser signed in as someone, nothing changes until they
   * confirm (confirmSetup): a link must not silently switch accounts. Otherwise a new anonymous
   * session goes to the new-password step.
   */
  async openSetup(current: Session | undefined, token: string): Promise<SetupOpening> {
    const found = await this.validSetupLink(token);
    if (found === 'claimed') return { kind: 'claimed' };
    if (!found) return { kind: 'invalid' };
    const setupTokenHash = digestOpaqueToken(token).toString('hex');
    const signedIn = current ? await this.signedInUser(current) : undefined;
    if (current && signedIn) {
      await this.sessions.patchState(current, { set: { pendingSetup: { setupTokenHash, email: found.email } } });
      return { kind: 'confirm', signedInAs: signedIn.email, setupFor: found.email };
    }
    if (current) await this.sessions.end(current);
    const issued = await this.sessions.start({ signIn: { step: 'setup', userId: found.id, setupTokenHash } });
    return { kind: 'next', issued };
  }

  /** The set-up link kept by openSetup, for the confirmation page: whose it is and who is signed in. */
  async pendingSetup(current: Session): Promise<{ signedInAs: string; setupFor: string } | undefined> {
    const pending = current.state.pendingSetup;
    const signedIn = await this.signedInUser(current);
    return pending && signedIn ? { signedInAs: signedIn.email, setupFor: pending.email } : undefined;
  }

  /** The signed-in person confirmed: their session ends here, and the set-up link's begins. */
  async confirmSetup(current: Session): Promise<SetupOpening> {
    const pending = current.state.pendingSetup;
    if (!pending) return { kind: 'invalid' };
    await this.sessions.end(current);
    const found = await this.store.signIn.findSetupRecord(Buffer.from(pending.setupTokenHash, 'hex'));
    if (found?.claimedElsewhere) return { kind: 'claimed' };
    if (!found?.active || !found.setupExpiresAt || found.setupExpiresAt <= this.clock.now()) return { kind: 'invalid' };
    const issued = await this.sessions.start({ signIn: { step: 'setup', userId: found.id, setupTokenHash: pending.setupTokenHash } });
    return { kind: 'next', issued };
  }

  /** The signed-in person declined: the link is forgotten, their session goes on. */
  async cancelSetup(current: Session): Promise<void> {
    await this.sessions.patchState(current, { remove: ['pendingSetup'] });
  }

  /** Sets the first password (the set-up link is used up) and goes on, under a new session id, to enrol an authenticator. */
  async setPassword(session: Session, password: string, confirmation: string): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'setup') return { kind: 'restart' };
    const found = await this.store.signIn.findSetupRecord(Buffer.from(step.setupTokenHash, 'hex'));
    const now = this.clock.now();
    if (found?.claimedElsewhere) return refusal(400, CLAIMED_ELSEWHERE);
    if (!found?.active || found.id !== step.userId || !found.setupExpiresAt || found.setupExpiresAt <= now) return { kind: 'restart' };
    if (password !== confirmation) return refusal(400, 'The two passwords differ.');
    const local = found.email.split('@')[0] ?? '';
    const problem = passwordProblem(password, [found.email, local, this.settings.issuer]);
    if (problem) return refusal(400, problem);
    const hash = await this.hasher.hash(password);
    let redeemed: boolean;
    try {
      redeemed = await this.store.transaction(async (tx) => {
        if (!(await tx.signIn.redeemSetupLink(found.id, Buffer.from(step.setupTokenHash, 'hex'), hash, this.clock.now()))) return false;
        await tx.audit.insertEvent(userEvent(found, now, 'user.password_set'));
        // a link that was mailed to the address proves it (docs/users.md): the other accounts with
        // the address that nobody proved give way, and their administrators see it
        if (found.mailed && !found.verified) await proveEmail(tx, found, 'setup_link', { kind: 'user', id: found.id }, now);
        return true;
      });
    } catch (err) {
      // another account proved the address between this link's check and now
      if (err instanceof DuplicateKeyError && err.key === 'user.provenEmail') return refusal(400, CLAIMED_ELSEWHERE);
      throw err;
    }
    if (!redeemed) return { kind: 'restart' };
    const issued = await this.sessions.rotate(session, { ...session.state, signIn: { step: 'enrol', userId: found.id, since: now.toISOString() } });
    return issued ? { kind: 'next', step: 'enrol', issued } : { kind: 'restart' };
  }

  /**
   * "Forgot your password?": a reset link for the address's sign-in account, mailed (docs/users.md
   * "Forgotten password"). Counted first, per client address and per address typed, before
   * anything is looked up (a refusal says when to try again, whatever the address). Then the same
   * reads for every address; a link and its mail only for an account that signs in with a
   * password; a mail saying how it signs in for an active account without one; nothing otherwise.
   * The answer comes no sooner than RESET_ANSWER_MS after the request, whatever was done.
   */
  async requestReset(rawEmail: string, attempt: Attempt): Promise<{ kind: 'requested' } | Refusal> {
    const started = performance.now();
    const key = emailKey(rawEmail);
    if (key === '' || key.length > 254 || !key.includes('@')) return refusal(400, 'Enter the e-mail address you sign in with.');
    const reservation = await this.gate.reserve([
      ['resetAddress', addressPrefix(attempt.address)],
      ['resetAccount', key],
    ]);
    if (reservation.kind === 'wait')
      return refusal(429, `Too many requests. Try again in ${inWords(reservation.seconds)}.`, { retryAfter: reservation.seconds });
    const [connection, user] = await Promise.all([this.sso.connectionFor(rawEmail), this.store.signIn.findSignInRecord(key)]);
    if (user?.active) {
      const now = this.clock.now();
      const token = newOpaqueToken();
      const expiresAt = new Date(now.getTime() + this.settings.resetTtlSeconds * 1000);
      await this.store.transaction(async (tx) => {
        const tenantName = await this.tenantName(tx, user.tenantId);
        if (user.passwordHash && (await tx.signIn.setResetLink(user.id, digestOpaqueToken(token), expiresAt))) {
          await this.mailer.send(tx, {
            to: user.email,
            tenantId: user.tenantId,
            tenantName,
            mail: { template: 'password_reset', resetUrl: resetUrl(this.settings.baseUrl, token), expiresAt },
          });
          await tx.audit.insertEvent({
            ...userEvent(user, now, 'user.password_reset_requested'),
            request: { id: attempt.requestId ?? '', address: attempt.address },
          });
        } else if (!user.passwordHash) {
          await this.mailer.send(tx, {
            to: user.email,
            tenantId: user.tenantId,
            tenantName,
            mail: { template: 'password_reset_unavailable', reason: connection ? 'sso' : 'not_set_up' },
          });
        }
      });
    }
    const left = RESET_ANSWER_MS - (performance.now() - started);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    return { kind: 'requested' };
  }

  /** A password reset link was opened: a new anonymous session at the reset step (the token
   *  leaves the address bar at once). A browser signed in is asked to sign out first. */
  async openReset(current: Session | undefined, token: string): Promise<ResetOpening> {
    const found = isOpaqueToken(token) ? await this.store.signIn.findResetRecord(digestOpaqueToken(token)) : undefined;
    if (!found?.active || found.expiresAt <= this.clock.now()) return { kind: 'invalid' };
    const signedIn = current ? await this.signedInUser(current) : undefined;
    if (signedIn) return { kind: 'signedIn', signedInAs: signedIn.email };
    if (current) await this.sessions.end(current);
    const issued = await this.sessions.start({
      signIn: { step: 'reset', userId: found.id, resetTokenHash: digestOpaqueToken(token).toString('hex') },
    });
    return { kind: 'next', issued };
  }

  /** The address a reset session is for (the page names the account), while its link holds. */
  async resetEmail(session: Session): Promise<string | undefined> {
    const step = session.state.signIn;
    if (step?.step !== 'reset') return undefined;
    const found = await this.store.signIn.findResetRecord(Buffer.from(step.resetTokenHash, 'hex'));
    return found?.active && found.id === step.userId && found.expiresAt > this.clock.now() ? found.email : undefined;
  }

  /**
   * The reset step: a new password under the policy; the link is used up, every session of the
   * account ends (whoever knew the old password is signed out), the person gets a notice. The
   * authenticator and recovery codes stay: the next sign-in asks for them.
   */
  async resetPassword(session: Session, password: string, confirmation: string, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn;
    if (step?.step !== 'reset') return { kind: 'restart' };
    const hashOfLink = Buffer.from(step.resetTokenHash, 'hex');
    const found = await this.store.signIn.findResetRecord(hashOfLink);
    if (!found?.active || found.id !== step.userId || found.expiresAt <= this.clock.now()) {
      await this.sessions.patchState(session, { set: { signIn: { step: 'email' } } });
      return refusal(400, RESET_LINK_GONE);
    }
    if (password !== confirmation) return refusal(400, 'The two passwords differ.');
    const local = found.email.split('@')[0] ?? '';
    const problem = passwordProblem(password, [found.email, local, this.settings.issuer]);
    if (problem) return refusal(400, problem);
    const hash = await this.hasher.hash(password);
    const reset = await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      if (!(await tx.signIn.redeemResetLink(found.id, hashOfLink, hash, now))) return false;
      await tx.sessions.deleteUserSessions(found.id);
      await tx.audit.insertEvent({
        ...userEvent(found, now, 'user.password_reset'),
        request: { id: attempt.requestId ?? '', address: attempt.address },
      });
      await this.notice(tx, found, 'password_changed', 'reset_link', attempt);
      return true;
    });
    await this.sessions.patchState(session, { set: { signIn: { step: 'email' } } });
    return reset ? { kind: 'passwordReset' } : refusal(400, RESET_LINK_GONE);
  }

  /**
   * A signed-in person changes their own password: the current one first (counted as a sign-in's
   * password is, so that a session left open does not make guessing it cheaper), then the policy
   * as at set-up. Every other session of theirs ends (whoever knew the old password is signed out).
   */
  async changePassword(
    session: Session,
    form: { current: string; password: string; confirmation: string },
    attempt: Attempt,
  ): Promise<{ kind: 'changed' } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active || !user.passwordHash)
      return refusal(400, 'Your account has no password to change: it signs in through single sign-on, or was reset.');
    const reservation = await this.gate.reserve(await this.attemptKeys(emailKey(user.email), user, attempt, 'password'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    if (!(await this.hasher.verify(user.passwordHash, form.current))) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user.email, attempt, 'password', 'failure');
      return refusal(400, 'Your current password is not right.');
    }
    await this.gate.release(reservation);
    if (form.password !== form.confirmation) return refusal(400, 'The two new passwords differ.');
    if (form.password === form.current) return refusal(400, 'The new password is the same as the current one.');
    const local = user.email.split('@')[0] ?? '';
    const problem = passwordProblem(form.password, [user.email, local, this.settings.issuer]);
    if (problem) return refusal(400, problem);
    const hash = await this.hasher.hash(form.password);
    const passwordHash = user.passwordHash;
    const changed = await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      // only if the password is still the one just checked: another change meanwhile (another tab
      // or browser) wins, and this one is refused, as it would be one after the other
      if (!(await tx.signIn.changePassword(user.id, passwordHash, hash, now))) return false;
      // whoever else knew the old password is signed out with it: every other session ends
      const ended = await tx.sessions.deleteOtherUserSessions(user.id, session.idHash);
      await tx.audit.insertEvent(userEvent(user, now, 'user.password_changed', { other_sessions_ended: ended }));
      await this.notice(tx, user, 'password_changed', 'self', attempt);
      return true;
    });
    if (changed) return { kind: 'changed' };
    const meanwhile = await this.store.signIn.findSignInRecordById(user.id);
    return meanwhile?.active && meanwhile.passwordHash
      ? refusal(400, 'Your password was changed meanwhile, in another window or browser. Enter the password you use now.')
      : refusal(400, ACCOUNT_CHANGED);
  }

  /**
   * A signed-in person replaces their recovery codes (the old ones stop working): a current code
   * from their authenticator first, counted as a sign-in's code is. The ten new codes are returned
   * to be shown once.
   */
  async renewRecoveryCodes(session: Session, code: string, attempt: Attempt): Promise<{ kind: 'renewed'; codes: string[] } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active || !user.totpSecretSealed)
      return refusal(400, 'Your account has no authenticator: it signs in through single sign-on, or was reset.');
    const checked = await this.currentCode(user, code, attempt);
    if (checked) return checked;
    const codes = newRecoveryCodes();
    const renewed = await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      if (!(await tx.signIn.replaceRecoveryCodes(user.id, codes.map(hashRecoveryCode), now))) return false;
      await tx.audit.insertEvent(userEvent(user, now, 'user.recovery_codes_renewed'));
      await this.notice(tx, user, 'recovery_codes_changed', 'self', attempt);
      return true;
    });
    return renewed ? { kind: 'renewed', codes } : refusal(400, ACCOUNT_CHANGED);
  }

  /**
   * A signed-in person replaces their authenticator, step 1: a current code from the one they
   * have; then a new key, kept sealed in their session until a code from it confirms it (step 2).
   */
  async beginReenrolment(session: Session, code: string, attempt: Attempt): Promise<{ kind: 'pending'; secret: TotpSecret } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active || !user.totpSecretSealed)
      return refusal(400, 'Your account has no authenticator: it signs in through single sign-on, or was reset.');
    // a lost authenticator is replaced with a recovery code in place of its code (used up)
    const checked = await this.currentCode(user, code, attempt, true);
    if (checked) return checked;
    const secret = newTotpSecret(user.email, this.settings.issuer);
    await this.sessions.patchState(session, {
      set: { reenrol: { pendingSecret: this.box.seal(secret.base32, ENROL_CONTEXT), since: this.clock.now().toISOString() } },
    });
    return { kind: 'pending', secret };
  }

  /** A replacement begun in this session, while it may still be finished (REENROL_TTL_MS): the key
   *  is not left readable in a session for its whole life. */
  private livePending(session: Session): { pendingSecret: string } | undefined {
    const pending = session.state.reenrol;
    if (!pending?.since) return undefined;
    const age = this.clock.now().getTime() - Date.parse(pending.since);
    return age >= 0 && age <= REENROL_TTL_MS ? pending : undefined;
  }

  /** The new authenticator a person is replacing theirs with, while one is pending in the session. */
  async pendingReenrolment(session: Session): Promise<TotpSecret | undefined> {
    const pending = this.livePending(session);
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!pending || !user?.active) return undefined;
    return totpSecret(this.box.open(pending.pendingSecret, ENROL_CONTEXT), user.email, this.settings.issuer);
  }

  /** Step 2: a first code from the new authenticator; it replaces the old one (the recovery codes stay). */
  async confirmReenrolment(session: Session, code: string, attempt: Attempt): Promise<{ kind: 'replaced' } | Refusal> {
    const pending = this.livePending(session);
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!pending || !user?.active || !user.totpSecretSealed)
      return refusal(400, 'Nothing is being replaced (a new authenticator waits 10 minutes for its first code): start again from your account page.');
    const reservation = await this.gate.reserve(await this.attemptKeys(emailKey(user.email), user, attempt, 'code'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    const base32 = this.box.open(pending.pendingSecret, ENROL_CONTEXT);
    const now = this.clock.now();
    const accepted = acceptTotp(base32, code, now, null);
    if (accepted === undefined) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user.email, attempt, 'totp', 'failure');
      return refusal(400, 'That code is not right. Enter the code the new authenticator shows now.');
    }
    await this.gate.release(reservation);
    const from = user.totpSecretSealed;
    const replaced = await this.store.transaction(async (tx) => {
      // only if the authenticator is still the one this replacement began from: another
      // replacement meanwhile (another window or browser) wins, and this one is refused
      if (!(await tx.signIn.replaceTotp(user.id, from, this.box.seal(base32, TOTP_CONTEXT), accepted, now))) return false;
      // a session opened with the old authenticator does not outlive it
      const ended = await tx.sessions.deleteOtherUserSessions(user.id, session.idHash);
      await tx.audit.insertEvent(userEvent(user, now, 'user.totp_reenrolled', { other_sessions_ended: ended }));
      await this.notice(tx, user, 'totp_changed', 'self', attempt);
      return true;
    });
    await this.sessions.patchState(session, { remove: ['reenrol'] });
    if (replaced) return { kind: 'replaced' };
    const meanwhile = await this.store.signIn.findSignInRecordById(user.id);
    return meanwhile?.active && meanwhile.totpSecretSealed
      ? refusal(
          400,
          'Your authenticator was replaced meanwhile, in another window or browser: the one set there is in use. Start again from your account page to replace it.',
        )
      : refusal(400, ACCOUNT_CHANGED);
  }

  /**
   * The signed-in person, confirmed by a current code from their authenticator (counted as a
   * sign-in's code is): what the account page asks before a change that reaches beyond the
   * session, such as a new address (email-change.ts). Refused for an account without one (it
   * signs in through SSO, or was reset).
   */
  async confirmedByCode(session: Session, code: string, attempt: Attempt): Promise<{ kind: 'confirmed'; user: SignInRecord } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active || !user.totpSecretSealed)
      return refusal(400, 'Your account has no authenticator: it signs in through single sign-on (your address comes from there), or was reset.');
    const checked = await this.currentCode(user, code, attempt);
    return checked ?? { kind: 'confirmed', user };
  }

  /** A code from the signed-in person's authenticator (not a recovery code), counted as a
   *  sign-in's; undefined when it passes, else the refusal. One code, one use. */
  private async currentCode(user: SignInRecord, code: string, attempt: Attempt, recoveryAccepted = false): Promise<Refusal | undefined> {
    const reservation = await this.gate.reserve(await this.attemptKeys(emailKey(user.email), user, attempt, 'code'));
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    const recovery = recoveryAccepted && canonicalRecoveryCode(code) !== undefined;
    let passed: boolean;
    if (recovery) {
      passed = await this.store.signIn.useRecoveryCode(user.id, hashRecoveryCode(code), this.clock.now());
    } else {
      const secret = this.box.open(user.totpSecretSealed!, TOTP_CONTEXT);
      const accepted = acceptTotp(secret, code, this.clock.now(), user.totpLastStep);
      passed = accepted !== undefined && (await this.store.signIn.advanceTotpStep(user.id, accepted));
    }
    if (!passed) {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user.email, attempt, recovery ? 'recovery_code' : 'totp', 'failure');
      return refusal(
        400,
        recovery
          ? WRONG_RECOVERY_CODE
          : `That code is not right, or it was already used. Enter the code your authenticator app shows now${recoveryAccepted ? ', or one of your recovery codes' : ''}.`,
      );
    }
    await this.gate.release(reservation);
    return undefined;
  }

  // ---- Passkeys (webauthn.ts; docs/users.md "Passkeys") ----

  /** Whether this deployment offers passkeys (its base URL names a host, not an IP address). */
  get passkeysOffered(): boolean {
    return this.rp !== undefined;
  }

  /**
   * The options of the passkey button of the step the session is at, its challenge kept in the
   * session (replacing any earlier one): at the e-mail and password steps any passkey of this site
   * (without a password; no account's passkeys are listed before a password passed, which would
   * tell that the address has an account), at the code step the account's own (in place of a
   * code). Undefined where no passkey can be used. A challenge the session holds for the same
   * step, with time enough left for the browser's prompt, is shown again rather than replaced.
   */
  async passkeySignInOptions(session: Session): Promise<PublicKeyCredentialRequestOptionsJSON | undefined> {
    const step = session.state.signIn ?? { step: 'email' as const };
    if (!this.rp) return undefined;
    let allowed: Passkey[] = [];
    let userId: string | null = null;
    if (step.step === 'totp') {
      // known at the password step (the account's record says whether it has any): no read for those without
      if (!step.passkeys) return undefined;
      allowed = await this.store.passkeys.listPasskeys(step.userId);
      if (allowed.length === 0) return undefined;
      userId = step.userId;
    } else if (step.step !== 'email' && step.step !== 'password') return undefined;
    const now = this.clock.now();
    const live = session.state.passkeyChallenge;
    const reuse = challengeHolds(live, 'signIn', now, PASSKEY_PROMPT_MS) && live.userId === userId;
    const challenge = reuse ? live.challenge : newChallenge();
    if (!reuse)
      await this.sessions.patchState(session, { set: { passkeyChallenge: { challenge, purpose: 'signIn', userId, issuedAt: now.toISOString() } } });
    return authenticationOptions(this.rp, allowed, challenge);
  }

  /**
   * A passkey's answer was posted at a sign-in step: at the code step, the second factor of the
   * account whose password passed; at the e-mail or password step, a sign-in without a password
   * (the account is the passkey's; at the password step it must be the one typed, for a sign-in
   * for one account the one named). Counted as a code is, before its signature is checked.
   */
  async passkey(session: Session, rawResponse: string, attempt: Attempt): Promise<Outcome> {
    const step = session.state.signIn ?? { step: 'email' as const };
    if (step.step !== 'email' && step.step !== 'password' && step.step !== 'totp') return { kind: 'restart' };
    // one answer per challenge, whatever it comes to
    const challenge = await this.sessions.takeState(session, 'passkeyChallenge');
    const now = this.clock.now();
    if (!this.rp)
      return refusal(400, 'Passkeys are not available on this service. Sign in with your password.', { reason: 'passkeys off: IP base URL' });
    if (!challengeHolds(challenge, 'signIn', now) || challenge.userId !== (step.step === 'totp' ? step.userId : null))
      return refusal(400, PASSKEY_EXPIRED, { reason: 'passkey challenge missing, expired or of another step' });
    const posted = postedCredential(rawResponse);
    if (!posted) return refusal(400, PASSKEY_NO_ANSWER, { reason: 'passkey answer unreadable' });
    const passkey = await this.store.passkeys.findPasskeyByCredentialId(posted.id);
    const owner = passkey ? await this.store.signIn.findSignInRecordById(passkey.userId) : undefined;
    const secondFactor = step.step === 'totp';
    // the account this attempt is counted under: the sign-in's, else the passkey's, else the address only
    const counted = secondFactor ? await this.store.signIn.findSignInRecordById(step.userId) : owner;
    if (secondFactor && !counted?.active) return { kind: 'restart' };
    const reservation = counted
      ? await this.gate.reserve(await this.attemptKeys(emailKey(counted.email), counted, attempt, 'code'))
      : await this.gate.reserve([['address', addressPrefix(attempt.address)]]);
    if (reservation.kind === 'wait') return waitOutcome(reservation);
    const fail = async (message: string, reason: string, user: SignInRecord | undefined = counted) => {
      await this.failed(user, reservation);
      await this.attemptEvent(user, user?.email ?? '', attempt, 'passkey', 'failure', { passwordless: !secondFactor, why: reason.slice(0, 200) });
      return refusal(400, message, { reason });
    };
    if (!passkey || !owner) return fail(PASSKEY_UNKNOWN, 'passkey not registered (removed, or never here)');
    if (secondFactor && passkey.userId !== step.userId) return fail(PASSKEY_NOT_THIS_ACCOUNT, 'passkey of another account at the code step');
    if (step.step === 'password' && passkey.userId !== step.userId)
      return fail(PASSKEY_NOT_THIS_ACCOUNT, 'passkey of another account than the one typed');
    const signInFor = session.state.signInFor;
    if (!secondFactor && signInFor && emailKey(signInFor.email) !== owner.emailNormalized)
      return fail(
        `This sign-in is for ${signInFor.email} only, and this passkey is another account's. Use that account's passkey or password.`,
        'passkey of another account than the one named',
      );
    if (!userHandleMatches(posted, passkey.userId)) return fail(PASSKEY_INVALID, 'passkey answer with the user handle of another account');
    const checked = await checkAuthentication(this.rp, challenge.challenge, posted, passkey);
    if (!checked.ok) return fail(checked.userVerification ? PASSKEY_NOT_VERIFIED : PASSKEY_INVALID, `passkey refused: ${checked.reason}`);
    if (!owner.active) return fail(PASSKEY_UNKNOWN, 'passkey of a disabled account');
    if (!secondFactor && (await this.sso.connectionFor(owner.email)))
      return fail(
        'Your organisation signs you in through its identity provider: enter your e-mail address to go there.',
        'passkey of an SSO address',
      );
    if (!(await this.store.passkeys.recordPasskeyUse(passkey.id, checked.value.counter, now))) {
      const still = await this.store.passkeys.findPasskeyByCredentialId(posted.id);
      if (!still) return fail(PASSKEY_UNKNOWN, 'passkey removed while signing in');
      // WebAuthn §6.1.1: a signature counter that did not increase is a sign of a cloned authenticator
      await this.store.audit.insertEvent({
        ...userEvent(owner, now, 'passkey.clone_suspected', {
          passkey_id: passkey.id,
          name: passkey.name,
          stored_counter: still.counter,
          presented_counter: checked.value.counter,
        }),
        outcome: 'failure',
        request: { id: attempt.requestId ?? '', address: attempt.address },
      });
      return fail(PASSKEY_CLONED, `passkey counter ${checked.value.counter} not above ${still.counter}: clone suspected`, owner);
    }
    const details = { passkey_id: passkey.id, passwordless: !secondFactor };
    return this.finish(session, owner, attempt, reservation, undefined, { factor: 'passkey', details });
  }

  /** The signed-in person's passkeys (their account page). */
  async passkeysOf(session: Session): Promise<Passkey[]> {
    return session.userId ? await this.store.passkeys.listPasskeys(session.userId) : [];
  }

  /**
   * The options of the account page's "Add a passkey" form, its challenge kept in the session;
   * undefined when the person cannot add one (no passkeys here, or an account without an
   * authenticator: single sign-on, or reset).
   */
  async passkeyRegistrationOptions(session: Session): Promise<PublicKeyCredentialCreationOptionsJSON | undefined> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!this.rp || !user?.active || !user.totpSecretSealed) return undefined;
    const options = await registrationOptions(this.rp, user, await this.store.passkeys.listPasskeys(user.id));
    await this.sessions.patchState(session, {
      set: { passkeyChallenge: { challenge: options.challenge, purpose: 'register', userId: user.id, issuedAt: this.clock.now().toISOString() } },
    });
    return options;
  }

  /**
   * A signed-in person adds a passkey: its name, a current code from their authenticator (a
   * passkey signs in without a password: adding one asks what replacing the authenticator asks),
   * and the browser's answer to the session's challenge, verified (this origin and RP id, the
   * user verified). One transaction: the passkey, its audit event and the notice to the person.
   */
  async registerPasskey(
    session: Session,
    form: { name: string; code: string; response: string },
    attempt: Attempt,
  ): Promise<{ kind: 'registered'; name: string } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active || !user.totpSecretSealed)
      return refusal(
        400,
        'Your account has no authenticator: it signs in through single sign-on, or was reset. Passkeys are added beside an authenticator.',
      );
    const challenge = await this.sessions.takeState(session, 'passkeyChallenge');
    if (!this.rp) return refusal(400, 'Passkeys are not available on this service.', { reason: 'passkeys off: IP base URL' });
    const name = form.name.normalize('NFC').trim().replace(/\s+/g, ' ');
    const problem = nameProblem(name, PASSKEY_NAME_MAX);
    if (problem) return refusal(400, `The passkey's name ${problem}. Give it a name that says which device it is on, such as "Work laptop".`);
    const now = this.clock.now();
    if (!challengeHolds(challenge, 'register', now) || challenge.userId !== user.id)
      return refusal(400, `${PASSKEY_EXPIRED.replace('Try again', 'Add it again')}`, { reason: 'passkey registration challenge missing or expired' });
    const posted = postedCredential(form.response);
    if (!posted) return refusal(400, PASSKEY_NO_ANSWER, { reason: 'passkey answer unreadable' });
    const checkedCode = await this.currentCode(user, form.code, attempt);
    if (checkedCode) return checkedCode;
    const checked = await checkRegistration(this.rp, challenge.challenge, posted);
    if (!checked.ok)
      return refusal(400, checked.userVerification ? PASSKEY_NOT_VERIFIED : PASSKEY_INVALID, {
        reason: `passkey registration refused: ${checked.reason}`,
      });
    const passkey: Passkey = { id: randomUUID(), userId: user.id, ...checked.value, name, createdAt: now, lastUsedAt: null };
    const added = await this.store.transaction(async (tx) => {
      if (!(await tx.passkeys.insertPasskey(passkey))) return false;
      await tx.audit.insertEvent(userEvent(user, now, 'passkey.registered', { passkey_id: passkey.id, name }));
      await this.notice(tx, user, 'passkey_added', 'self', attempt, name);
      return true;
    });
    return added ? { kind: 'registered', name } : refusal(400, 'This passkey is registered already. Each passkey is added once.');
  }

  /** A signed-in person removes one of their passkeys (it no longer signs anyone in). */
  async removePasskey(session: Session, id: string, attempt?: Attempt): Promise<{ kind: 'removed'; name: string } | Refusal> {
    const user = session.userId ? await this.store.signIn.findSignInRecordById(session.userId) : undefined;
    if (!user?.active) return refusal(400, ACCOUNT_CHANGED);
    const removed = await this.store.transaction(async (tx) => {
      const gone = UUID_PATTERN.test(id) ? await tx.passkeys.deletePasskey(user.id, id.toLowerCase()) : undefined;
      if (gone) {
        await tx.audit.insertEvent(userEvent(user, this.clock.now(), 'passkey.removed', { passkey_id: gone.id, name: gone.name }));
        await this.notice(tx, user, 'passkey_removed', 'self', attempt, gone.name);
      }
      return gone;
    });
    return removed
      ? { kind: 'removed', name: removed.name }
      : refusal(404, 'You have no passkey with this id: it was removed already. Your passkeys are listed on your account page.');
  }

  /** One of the signed-in person's passkeys (the removal's confirmation names it). */
  async passkeyOf(session: Session, id: string): Promise<Passkey | undefined> {
    return (await this.passkeysOf(session)).find((p) => p.id === id);
  }

  /** The address a set-up session is for (the page names the account), if the session is at that step. */
  async setupEmail(session: Session): Promise<string | undefined> {
    const step = session.state.signIn;
    if (step?.step !== 'setup') return undefined;
    return (await this.store.signIn.findSetupRecord(Buffer.from(step.setupTokenHash, 'hex')))?.email;
  }

  /** Who a signed-in session belongs to (for the pages to show). */
  async signedInUser(session: Session): Promise<{ id: string; email: string; tenantId: string } | undefined> {
    if (!session.userId) return undefined;
    const user = await this.store.signIn.findSignInRecordById(session.userId);
    return user?.active ? { id: user.id, email: user.email, tenantId: user.tenantId } : undefined;
  }

  /** The signed-in user as the principal its pages act as: its roles as held now, the same
   *  principal a token of this user would load (access/authenticate.ts). */
  signedInPrincipal(session: Session): Promise<Principal | undefined> {
    if (!session.userId) return Promise.resolve(undefined);
    return this.store.principals.findUserPrincipal(session.userId);
  }

  private async validSetupLink(token: string) {
    if (!isOpaqueToken(token)) return undefined;
    const found = await this.store.signIn.findSetupRecord(digestOpaqueToken(token));
    if (found?.claimedElsewhere) return 'claimed' as const;
    return found?.active && found.setupExpiresAt && found.setupExpiresAt > this.clock.now() ? found : undefined;
  }

  private async finish(
    session: Session,
    user: SignInRecord,
    attempt: Attempt,
    reservation: Reservation,
    notice?: string,
    how: { factor: 'second_factor' | 'passkey'; details?: Record<string, unknown> } = { factor: 'second_factor' },
    landing?: string,
  ): Promise<Outcome> {
    const account = emailKey(user.email);
    const prefix = addressPrefix(attempt.address);
    if (reservation.kind === 'reserved') await this.gate.release(reservation);
    // what others tried since: told to the owner on the first page, before the counts are cleared
    const elsewhere = await this.failuresElsewhere(account, prefix);
    const browser = await this.recognise(attempt.browser, user.id);
    // The owner's success clears their own counts: this address's and this browser's. Not the
    // account-wide ones (passwords and codes from unrecognised browsers): an attacker would get a
    // fresh allowance at every sign-in of the owner.
    await this.gate.clear([
      ['account', `${account}|${prefix}`],
      ['code', `${account}|${prefix}`],
      ['browser', `${digestOpaqueToken(browser).toString('hex')}|${user.id}`],
    ]);
    const returnTo = session.state.returnTo ?? landing ?? '/console';
    await this.attemptEvent(user, user.email, attempt, how.factor, 'success', how.details);
    const issued = await this.sessions.signIn(session, user.id, returnTo, [notice, elsewhere].filter(Boolean).join(' ') || undefined);
    return { kind: 'signedIn', issued, returnTo, browser };
  }

  /**
   * The counts an attempt is made under: a recognised browser's own (unless it reached its
   * ceiling), or else those of the address, the account from the address, and the account from
   * every unrecognised browser. The same reads whether or not the account exists.
   */
  private async attemptKeys(account: string, user: SignInRecord | undefined, attempt: Attempt, factor: 'password' | 'code'): Promise<AttemptKeys> {
    const browser = attempt.browser;
    if (isOpaqueToken(browser)) {
      const hash = digestOpaqueToken(browser);
      const now = this.clock.now();
      if (await this.store.signIn.isRecognisedBrowser(hash, user?.id ?? NO_USER, now)) {
        const key: [AttemptKind, string] = ['browser', `${hash.toString('hex')}|${user!.id}`];
        const own = (await this.store.attempts.findAttempts([attemptKey(...key)])).get(attemptKey(...key));
        if (!own || isStale(ATTEMPT_RULES.browser, own, now) || own.attempts < BROWSER_CEILING) return [key];
      }
    }
    const prefix = addressPrefix(attempt.address);
    return factor === 'password'
      ? [
          ['address', prefix],
          ['account', `${account}|${prefix}`],
          ['accountAll', account],
        ]
      : [
          ['address', prefix],
          ['code', `${account}|${prefix}`],
          ['secondFactor', account],
          ['secondFactorMonth', account],
        ];
  }

  /** After a failure of an existing account: the attempt that used up its account-wide allowance
   *  in a window writes an audit event (its administrators see that it is under attack). Decided
   *  from the counts the reservation returned: no read that an unknown address would not make. */
  private async failed(user: SignInRecord | undefined, reservation: Extract<Reservation, { kind: 'reserved' }>): Promise<void> {
    if (!user) return;
    for (const kind of ['accountAll', 'secondFactor', 'secondFactorMonth'] as const) {
      if (reservation.counts[kind] !== ATTEMPT_RULES[kind].free) continue;
      await this.store.audit.insertEvent(
        principalEvent(
          { kind: 'user', id: user.id },
          this.clock.now(),
          user.tenantId,
          'user.sign_in_throttled',
          { kind: 'user', id: user.id },
          {
            factor: kind === 'accountAll' ? 'password' : 'second_factor',
            failures: reservation.counts[kind],
          },
        ),
      );
    }
  }

  /**
   * The audit event of a sign-in attempt that the throttle let through (docs/operations.md "Audit
   * trail"): a success, or a failure of a factor. Written whether or not an account has the
   * address (one insert either way: no timing tell); an unknown address's failure goes to the
   * vendor's trail (tenant 1), with the address typed. Attempts the throttle holds back write
   * nothing: the throttle bounds how many events an attack writes.
   */
  private async attemptEvent(
    user: SignInRecord | undefined,
    email: string,
    attempt: Attempt,
    factor: 'password' | 'totp' | 'recovery_code' | 'second_factor' | 'passkey',
    outcome: 'success' | 'failure',
    more: Record<string, unknown> = {},
  ): Promise<void> {
    const known = user !== undefined;
    await this.store.audit.insertEvent({
      occurredAt: this.clock.now(),
      tenantId: known ? user.tenantId : ROOT_TENANT_ID,
      actor: { kind: 'user', id: known ? user.id : 'unknown', tenantId: known ? user.tenantId : null },
      action: outcome === 'success' ? 'user.signed_in' : 'user.sign_in_failed',
      target: { kind: 'user', id: known ? user.id : 'unknown' },
      // an address with no account: its domain only. What was typed may be a password typed in
      // the wrong field, and the trail is read by people and exported to a SIEM.
      details: known ? { factor, ...more } : { factor, ...more, emailDomain: emailDomainOf(email) },
      outcome,
      request: { id: attempt.requestId ?? '', address: attempt.address },
    });
  }

  /** Words for the owner about failed attempts on their account from other addresses, if any. */
  private async failuresElsewhere(account: string, prefix: string): Promise<string | undefined> {
    const keys = {
      passwords: attemptKey('accountAll', account),
      ownPasswords: attemptKey('account', `${account}|${prefix}`),
      codes: attemptKey('secondFactor', account),
      ownCodes: attemptKey('code', `${account}|${prefix}`),
    };
    // the four counts in one read
    const found = await this.store.attempts.findAttempts(Object.values(keys));
    const count = (key: string) => found.get(key)?.attempts ?? 0;
    // the account-wide counts less this address's own (the owner's typing), like from like
    const passwords = Math.max(0, count(keys.passwords) - count(keys.ownPasswords));
    const codes = Math.max(0, count(keys.codes) - count(keys.ownCodes));
    const parts: string[] = [];
    if (passwords > 0) parts.push(`Recently ${times(passwords, 'wrong password')} tried for your account from other places.`);
    if (codes > 0) {
      parts.push(
        `Recently ${times(codes, 'wrong code')} tried after a correct password: if that was not you, someone knows your password; ask an Administrator to reset your sign-in.`,
      );
    }
    return parts.length > 0 ? parts.join(' ') : undefined;
  }

  /** The browser's recognition cookie after a sign-in: the one it sent if it already counts for
   *  this account, else a new one (never one the browser chose), which keeps the accounts the
   *  old one was recognised for. */
  private async recognise(presented: string | undefined, userId: string): Promise<string> {
    const now = this.clock.now();
    const until = new Date(now.getTime() + RECOGNISED_DAYS * 86_400_000);
    const valid = isOpaqueToken(presented);
    if (valid && (await this.store.signIn.isRecognisedBrowser(digestOpaqueToken(presented), userId, now))) {
      await this.store.signIn.recogniseBrowser(digestOpaqueToken(presented), userId, now, until);
      return presented;
    }
    const fresh = newOpaqueToken();
    if (valid) await this.store.signIn.renameBrowser(digestOpaqueToken(presented), digestOpaqueToken(fresh));
    await this.store.signIn.recogniseBrowser(digestOpaqueToken(fresh), userId, now, until);
    return fresh;
  }

  /** Queues a security notice to the account's address (mail/templates.ts), in `tx`: the change's
   *  transaction. The passkeys' use cases call it with 'passkey_added' / 'passkey_removed' and the
   *  passkey's name as `detail`. */
  private async notice(
    tx: Pick<SignInStores, 'mail' | 'tenants'>,
    user: { tenantId: string; email: string },
    template: NoticeTemplate,
    by: NoticeBy,
    attempt?: Attempt,
    detail?: string,
  ): Promise<void> {
    await this.mailer.send(tx, {
      to: user.email,
      tenantId: user.tenantId,
      tenantName: await this.tenantName(tx, user.tenantId),
      mail: { template, at: this.clock.now(), by, address: attempt?.address, userAgent: attempt?.userAgent, detail },
    });
  }

  private tenantName(tx: Pick<SignInStores, 'tenants'>, tenantId: string): Promise<string> {
    return tenantNameOf(tx.tenants, tenantId);
  }

  /** The hash an address without an account (or an account without a password) is checked
   *  against, so that timing does not tell: made once, by the hasher that makes the stored ones. */
  private placeholderHash(): Promise<string> {
    this.dummyHash ??= this.hasher.hash('gatehouse-no-such-account-password').catch((err: unknown) => {
      // not kept: the next attempt makes it again rather than every sign-in failing from now on
      this.dummyHash = undefined;
      throw err;
    });
    return this.dummyHash;
  }
}

/** The words of a refusal to check an attempt now. */
function waitOutcome(r: Extract<Reservation, { kind: 'wait' }>): Refusal {
  const when = inWords(r.seconds);
  const message =
    r.refusedBy === 'accountAll' || r.refusedBy === 'secondFactor'
      ? `This account has had too many failed sign-in attempts from other places. Sign in from a browser you have signed in with before, or try again in ${when}.`
      : `Too many attempts. Try again in ${when}.`;
  return refusal(429, message, { retryAfter: r.seconds });
}

/** "1 wrong password was", "3 wrong passwords were" */
function times(n: number, what: string): string {
  return n === 1 ? `1 ${what} was` : `${n} ${what}s were`;
}

/** A change a person makes to their own account. */
function userEvent(user: { id: string; tenantId: string }, occurredAt: Date, action: string, details: Record<string, unknown> = {}): AuditEvent {
  return principalEvent({ kind: 'user', id: user.id }, occurredAt, user.tenantId, action, { kind: 'user', id: user.id }, details);
}

/** The domain of what was typed as an address, when it reads as one (else null): never the rest. */
function emailDomainOf(typed: string): string | null {
  const at = typed.lastIndexOf('@');
  const domain = at > 0 ? typed.slice(at + 1).toLowerCase() : '';
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain) ? domain : null;
}
