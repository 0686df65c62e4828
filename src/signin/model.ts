// The sign-in flow's pure values, shared by its use cases (service.ts, reseal.ts).

/** The context TOTP secrets are sealed under (crypto/sealed-box.ts): the sign-in service seals
 *  and opens them with it, and start-up re-seals them under a new key (reseal.ts). */
export const TOTP_CONTEXT = 'user.totp';

/** The context of the authenticator being enrolled, sealed in the session until a first code
 *  confirms it. */
export const ENROL_CONTEXT = 'session.totp-enrolment';
