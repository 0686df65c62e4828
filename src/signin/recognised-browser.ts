// A browser that signed in to an account before (OWASP's "device cookie"): after every complete
// sign-in the browser keeps a long-lived cookie whose secret (an opaque token,
// crypto/opaque-token.ts) the database knows by its digest, per account. In a later sign-in to
// that account the browser is recognised and makes its attempts under its own allowance: failures
// from elsewhere, however many, do not keep it out, and its own do not count against the account
// (docs/users.md, "Throttles").

/** how long a browser stays recognised after its last sign-in */
export const RECOGNISED_DAYS = 90;
