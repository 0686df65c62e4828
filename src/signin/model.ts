// The sign-in flow's pure values, shared by its use cases (service.ts, reseal.ts).

/** The context TOTP secrets are sealed under (crypto/sealed-box.ts): the sign-in service seals
 *  and opens them with it, and start-up re-seals them under a new key (reseal.ts). */
export const TOTP_CONTEXT = 'user.totp';

/** The context of the authenticator being enrolled, sealed in the session until a first code
 *  confirms it. */
export const ENROL_CONTEXT = 'session.totp-enrolment';

/** the set-up of an account whose address another account proved first (docs/users.md) */
/** The refusal of a change to one's own account that finds the account changed under it. */
export const ACCOUNT_CHANGED = 'Your account changed meanwhile (it was reset or disabled). Sign in again.';

export const CLAIMED_ELSEWHERE =
  'This set-up link no longer works: another account proved that it owns this e-mail address first, so this account cannot use it. Ask your administrator: they see why on your account’s page.';
