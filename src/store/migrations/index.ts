// The ordered list of migrations. Names sort by time; the Migrator applies the missing ones.
import type { Migration } from 'kysely';
import { foundation } from './20261122T0900-foundation.js';
import { tenantInterface } from './20261122T1400-tenant-interface.js';
import { tenantClosure } from './20261122T1900-tenant-closure.js';
import { tokensValidAfter } from './20261123T0900-tokens-valid-after.js';
import { nameKeys } from './20261123T0910-name-keys.js';
import { users } from './20261124T0900-users.js';
import { sessions } from './20261124T1000-sessions.js';
import { deviceAuthorizations } from './20261124T1100-device-authorizations.js';
import { deviceRequester } from './20261124T1200-device-requester.js';
import { sso } from './20261125T0900-sso.js';
import { authChanges } from './20261126T0900-auth-changes.js';
import { tokenFailures } from './20261127T0900-token-failures.js';
import { subtreeSizes } from './20261127T1000-subtree-sizes.js';
import { listingChanges } from './20261128T0900-listing-changes.js';
import { signInAttempts } from './20261129T0900-sign-in-attempts.js';
import { signingKeySchedule } from './20261130T0900-signing-key-schedule.js';
import { revokedTokens } from './20261130T1000-revoked-tokens.js';
import { auditTrail } from './20261130T1200-audit-trail.js';
import { processHeartbeats } from './20261130T1210-process-heartbeats.js';
import { mailOutbox } from './20261201T0900-mail-outbox.js';
import { ssoDomainProofs } from './20261201T1000-sso-domain-proofs.js';
import { passkeys } from './20261201T1100-passkeys.js';
import { passwordReset } from './20261202T0900-password-reset.js';
import { emailProofCorrections } from './20261203T0900-email-proof-corrections.js';
import { idempotencyKeys } from './20261204T0900-idempotency-keys.js';
import { childrenInIdOrder } from './20261205T0900-children-in-id-order.js';

export const migrations: Record<string, Migration> = {
  '20261122T0900-foundation': foundation,
  '20261122T1400-tenant-interface': tenantInterface,
  '20261122T1900-tenant-closure': tenantClosure,
  '20261123T0900-tokens-valid-after': tokensValidAfter,
  '20261123T0910-name-keys': nameKeys,
  '20261124T0900-users': users,
  '20261124T1000-sessions': sessions,
  '20261124T1100-device-authorizations': deviceAuthorizations,
  '20261124T1200-device-requester': deviceRequester,
  '20261125T0900-sso': sso,
  '20261126T0900-auth-changes': authChanges,
  '20261127T0900-token-failures': tokenFailures,
  '20261127T1000-subtree-sizes': subtreeSizes,
  '20261128T0900-listing-changes': listingChanges,
  '20261129T0900-sign-in-attempts': signInAttempts,
  '20261130T0900-signing-key-schedule': signingKeySchedule,
  '20261130T1000-revoked-tokens': revokedTokens,
  '20261130T1200-audit-trail': auditTrail,
  '20261130T1210-process-heartbeats': processHeartbeats,
  '20261201T0900-mail-outbox': mailOutbox,
  '20261201T1000-sso-domain-proofs': ssoDomainProofs,
  '20261201T1100-passkeys': passkeys,
  '20261202T0900-password-reset': passwordReset,
  '20261203T0900-email-proof-corrections': emailProofCorrections,
  '20261204T0900-idempotency-keys': idempotencyKeys,
  '20261205T0900-children-in-id-order': childrenInIdOrder,
};
