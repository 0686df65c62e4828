// Session use cases: start an anonymous session for a sign-in, find the session a cookie names
// (ending it if it no longer holds), sign in under a new id (no session fixation), sign out.
import { principalEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, isOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import type { Transactional } from '../transaction.js';
import type { IssuedSession, Session, SessionLifecycle, SessionState, SessionStatePatch, SessionSummary, SessionTimeouts } from './model.js';
import type { SessionStore, SessionWithUser } from './store.js';

export interface SessionStores {
  sessions: SessionStore;
  audit: Pick<AuditStore, 'insertEvent'>;
}

/** Whose sessions: the signed-in user (its home tenant is where the audit event goes). */
export interface SessionOwner {
  id: string;
  tenantId: string;
}

/** last_seen_at is written at most this often: a page view is not a write */
const TOUCH_EVERY_MS = 60_000;
/** an anonymous session (a sign-in under way) lasts at most this long */
const ANONYMOUS_SECONDS = 15 * 60;

export class SessionService implements SessionLifecycle {
  constructor(
    private readonly store: Transactional<SessionStores>,
    private readonly clock: Clock,
    private readonly timeouts: SessionTimeouts,
  ) {}

  /** A new anonymous session, for the forms of a sign-in. */
  async start(state: SessionState = {}): Promise<IssuedSession> {
    const now = this.clock.now();
    const secret = newOpaqueToken();
    const session = this.newRow(secret, now, null, state, Math.min(ANONYMOUS_SECONDS, this.timeouts.absoluteSeconds));
    await this.store.sessions.insertSession(session);
    return { secret, session };
  }

  /** The live session a cookie names; a session that no longer holds is deleted and not returned. */
  async find(secret: string | undefined): Promise<Session | undefined> {
    if (!isOpaqueToken(secret)) return undefined;
    const idHash = digestOpaqueToken(secret);
    const found = await this.store.sessions.findSession(idHash);
    if (!found) return undefined;
    const now = this.clock.now();
    if (!this.holds(found, now)) {
      await this.store.sessions.deleteSession(idHash);
      return undefined;
    }
    if (now.getTime() - found.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await this.store.sessions.touchSession(idHash, now);
    const { user: _user, ...session } = found;
    return session;
  }

  /** The live sessions of the signed-in person who holds `session` (theirs only), most recently seen first. */
  async ofUser(session: Session): Promise<SessionSummary[]> {
    if (!session.userId) return [];
    const now = this.clock.now();
    const all = await this.store.sessions.listUserSessions(session.userId);
    return all.filter((s) => s.expiresAt > now && now.getTime() - s.lastSeenAt.getTime() < this.timeouts.idleSeconds * 1000);
  }

  /** Signs the person out everywhere but here: every other session of theirs ends, with its audit event. How many ended. */
  async endOthers(session: Session, owner: SessionOwner): Promise<number> {
    if (session.userId !== owner.id) throw new Error('a session ends only its own user’s other sessions');
    return await this.store.transaction(async (tx) => {
      const ended = await tx.sessions.deleteOtherUserSessions(owner.id, session.idHash);
      await tx.audit.insertEvent(
        principalEvent(
          { kind: 'user', id: owner.id },
          this.clock.now(),
          owner.tenantId,
          'user.sessions_ended',
          { kind: 'user', id: owner.id },
          { ended },
        ),
      );
      return ended;
    });
  }

  private holds(s: SessionWithUser, now: Date): boolean {
    if (s.expiresAt <= now) return false;
    if (now.getTime() - s.lastSeenAt.getTime() >= this.timeouts.idleSeconds * 1000) return false;
    if (s.userId === null) return true;
    const u = s.user;
    if (!u || u.disabledAt !== null || u.emailSupersededAt !== null || !u.tenantEnabled || s.signedInAt === null) return false;
    // cut off (disabled, reset) after this session signed in: it ends, as tokens do
    return u.tokensValidAfter === null || u.tokensValidAfter <= s.signedInAt;
  }

  /** Sets and removes the keys a step means, in the database as it is now: what another request
   *  of the session (another tab, a sign-in step) wrote meanwhile under other keys stays. */
  async patchState(session: Session, patch: SessionStatePatch): Promise<void> {
    await this.store.sessions.patchSessionState(session.idHash, patch);
  }

  /** Takes one key out of the session's state: its value, to the one request that took it. */
  async takeState<K extends keyof SessionState>(session: Session, key: K): Promise<SessionState[K] | undefined> {
    return await this.store.sessions.takeSessionStateKey(session.idHash, key);
  }

  /**
   * A step of a sign-in raised trust (a password passed, a set-up link was used): the anonymous
   * session goes on under a new id and CSRF token with `state`, so whoever planted or saw the
   * previous cookie holds nothing. Undefined when the previous session is gone already (another
   * request rotated or ended it first).
   */
  async rotate(previous: Session, state: SessionState): Promise<IssuedSession | undefined> {
    const secret = newOpaqueToken();
    return await this.store.transaction(async (tx) => {
      if (!(await tx.sessions.deleteSession(previous.idHash))) return undefined;
      const now = this.clock.now();
      // an anonymous session keeps its end: rotating does not extend a sign-in under way
      const session = { ...this.newRow(secret, now, null, state, ANONYMOUS_SECONDS), expiresAt: previous.expiresAt };
      await tx.sessions.insertSession(session);
      return { secret, session };
    });
  }

  /** Every factor passed: the anonymous session ends and a new one, under a new id, begins,
   *  carrying where to go and a notice for the first page, if any. */
  async signIn(previous: Session | undefined, userId: string, returnTo?: string, notice?: string): Promise<IssuedSession> {
    const secret = newOpaqueToken();
    return await this.store.transaction(async (tx) => {
      const now = this.clock.now();
      if (previous) await tx.sessions.deleteSession(previous.idHash);
      const state: SessionState = { ...(returnTo ? { returnTo } : {}), ...(notice ? { notice } : {}) };
      const session = this.newRow(secret, now, userId, state, this.timeouts.absoluteSeconds);
      await tx.sessions.insertSession(session);
      await tx.sessions.recordSignIn(userId, now);
      return { secret, session };
    });
  }

  async end(session: Session): Promise<void> {
    await this.store.sessions.deleteSession(session.idHash);
  }

  private newRow(secret: string, now: Date, userId: string | null, state: SessionState, lifetimeSeconds: number): Session {
    return {
      idHash: digestOpaqueToken(secret),
      userId,
      signedInAt: userId === null ? null : now,
      state,
      csrfToken: newOpaqueToken(),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000),
    };
  }
}
