// What the session use cases need from storage.
import type { Session, SessionState, SessionStatePatch, SessionSummary } from './model.js';

/** A session with what decides whether it still holds: its user's and home tenant's state. */
export interface SessionWithUser extends Session {
  user: {
    disabledAt: Date | null;
    /** when another account proved the user's address and this one gave way (it signs in no more) */
    emailSupersededAt: Date | null;
    /** the later of the user's and its tenant's cut-off; null when never cut */
    tokensValidAfter: Date | null;
    tenantEnabled: boolean;
  } | null;
}

export interface SessionStore {
  insertSession(session: Session): Promise<void>;
  findSession(idHash: Buffer): Promise<SessionWithUser | undefined>;
  /** whether there was such a session */
  deleteSession(idHash: Buffer): Promise<boolean>;
  touchSession(idHash: Buffer, at: Date): Promise<void>;
  /** Sets the keys of `patch.set` and removes those of `patch.remove` in one statement; every
   *  other key stays as it is in the database now (not as the caller read it). No use case writes
   *  a live session's state whole: two requests of one session (two tabs, a sign-in step and a
   *  notice) would undo each other's keys; a new state is a new session (insertSession). */
  patchSessionState(idHash: Buffer, patch: SessionStatePatch): Promise<void>;
  /** Removes one key and returns the value it had: of requests taking it at once, one gets it. */
  takeSessionStateKey<K extends keyof SessionState>(idHash: Buffer, key: K): Promise<SessionState[K] | undefined>;
  deleteUserSessions(userId: string): Promise<void>;
  /** The signed-in sessions of a user, the most recently seen first. */
  /** the user's sessions, as summaries (no CSRF token, no state), the most recently seen first */
  listUserSessions(userId: string): Promise<SessionSummary[]>;
  /** Deletes the user's sessions but one (the one asking); how many. */
  deleteOtherUserSessions(userId: string, keepIdHash: Buffer): Promise<number>;
  recordSignIn(userId: string, at: Date): Promise<void>;
  /** removes sessions past their absolute end; returns how many */
  /** Deletes sessions past their absolute end (`now`) or idle since before `idleSince`; how many. */
  deleteExpiredSessions(now: Date, idleSince: Date): Promise<number>;
}
