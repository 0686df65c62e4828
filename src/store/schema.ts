// Row types of the database, as Kysely sees them. Only the store layer imports these; the rest of
// the code works with the domain types of each capability.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** int8 (tenant ids): text on both engines, so ids beyond 2^53 keep every digit (see db.ts) */
type Int8 = ColumnType<string, string, string>;
type Json<T> = ColumnType<T, string, string>;

export interface TenantsTable {
  id: ColumnType<string, string | undefined, never>;
  parent_id: Int8 | null;
  /** materialized ancestry, root first, each id followed by '.', e.g. '1.5.23.' */
  path: string;
  depth: number;
  name: string;
  name_normalized: string;
  is_partner: Generated<boolean>;
  domain: string | null;
  domain_normalized: string | null;
  description: string | null;
  allow_response_actions: Generated<boolean>;
  actions_approver: string | null;
  support_enabled: Generated<boolean>;
  support_expires_at: NullableTimestamp;
  support_reason: string | null;
  expires_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** enabled in at least one environment (kept with the environments, in one transaction) */
  enabled: Generated<boolean>;
  /** set when the tenant is disabled: tokens of its principals issued before it stay refused */
  tokens_valid_after: NullableTimestamp;
}

/** maintained by a trigger on tenants (migration 20261122T1900); never written by the app */
export interface TenantClosureTable {
  ancestor_id: Int8;
  tenant_id: Int8;
  name_normalized: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TenantEnvironmentsTable {
  id: string;
  tenant_id: Int8;
  name: string;
  enabled: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TenantLabelsTable {
  id: string;
  tenant_id: Int8;
  name: string;
  name_normalized: string;
  value: string | null;
  owner_partner_tenant_id: Int8;
  restricted: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ServicesTable {
  id: string;
  owner_tenant_id: Int8;
  name: string;
  /** comparison key of the name (text.ts nameKey); unique per owner */
  name_normalized: string;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PartnerSubscriptionsTable {
  id: string;
  partner_tenant_id: Int8;
  service_id: string;
  name: string;
  name_normalized: string;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  retired_at: NullableTimestamp;
}

export interface TenantSubscriptionsTable {
  tenant_id: Int8;
  subscription_id: string;
  assigned_at: Timestamp;
  assigned_by: string;
}

export interface UsersTable {
  id: string;
  tenant_id: Int8;
  email: string;
  email_normalized: string;
  display_name: Generated<string>;
  /** argon2id (users/password.ts); null until the set-up link is used */
  password_hash: string | null;
  /** TOTP secret, sealed with the service encryption key (crypto/sealed-box.ts) */
  totp_secret_sealed: string | null;
  /** the last TOTP time step accepted: a code is refused in a step already used */
  totp_last_step: Int8 | null;
  /** SHA-256 of the pending set-up link's token */
  setup_token_hash: Uint8Array | null;
  setup_expires_at: NullableTimestamp;
  /** tokens issued before this instant are void (the user was disabled then) */
  tokens_valid_after: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
  created_by: string | null;
  updated_by: string | null;
  disabled_at: NullableTimestamp;
  last_sign_in_at: NullableTimestamp;
  /** when the address was proven: set-up through a mailed link, a new address confirmed through a
   *  mailed link, or a sign-in through SSO in a domain proven by DNS; accounts set up before mail
   *  existed are grandfathered (20261201T0900, corrected by 20261203T0900) */
  email_verified_at: NullableTimestamp;
  /** when another account proved this address: this one's set-up link stopped working then */
  email_superseded_at: NullableTimestamp;
  /** whether the pending set-up link was mailed (only then does using it prove the address) */
  setup_link_mailed: Generated<boolean>;
  /** a new address the person asked for, until they follow the link mailed to it */
  pending_email: string | null;
  /** SHA-256 of that link's token */
  pending_email_token_hash: Uint8Array | null;
  pending_email_expires_at: NullableTimestamp;
  /** whether that link was mailed through an SMTP server (only then does following it prove the address) */
  pending_email_mailed: Generated<boolean>;
  /** SHA-256 of the pending password reset link's token (/login/forgot), and its end */
  reset_token_hash: Uint8Array | null;
  reset_expires_at: NullableTimestamp;
}

/** src/mail/: one message to send; the body sealed, dropped once sent */
export interface MailOutboxTable {
  id: string;
  tenant_id: Int8 | null;
  template: string;
  to_address: string;
  subject: string;
  body_sealed: string | null;
  status: 'queued' | 'sending' | 'sent' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  lease_until: NullableTimestamp;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: NullableTimestamp;
}

export interface UserRecoveryCodesTable {
  user_id: string;
  /** SHA-256 of the code */
  code_hash: Uint8Array;
  created_at: Timestamp;
  used_at: NullableTimestamp;
}

/** A person's passkey (WebAuthn credential; migration 20261201T1100-passkeys) */
export interface PasskeysTable {
  id: string;
  user_id: string;
  /** the credential id, base64url, as the authenticator gave it */
  credential_id: string;
  /** COSE public key */
  public_key: Uint8Array;
  /** the signature counter last accepted */
  counter: Int8;
  /** the transports the browser reported, comma-separated */
  transports: string;
  name: string;
  created_at: Timestamp;
  last_used_at: NullableTimestamp;
}

export interface ClientsTable {
  id: string;
  tenant_id: Int8;
  client_id: string;
  name: string;
  /** comparison key of the name (text.ts nameKey); unique among the tenant's live clients */
  name_normalized: string;
  environment: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  created_by: string | null;
  updated_by: string | null;
  revoked_at: NullableTimestamp;
  revoked_by: string | null;
}

export interface ClientSecretsTable {
  id: string;
  client_id: string;
  tenant_id: Int8;
  /** SHA-256 of the secret */
  secret_hash: Uint8Array;
  /** non-secret reminder: prefix and last four characters */
  hint: string;
  created_at: Timestamp;
  /** end of a rotation grace period; null while the secret is current */
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

export interface RoleAssignmentsTable {
  id: string;
  tenant_id: Int8;
  principal_kind: 'client' | 'user';
  principal_id: string;
  role_id: string;
  expires_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface ClientCreationsTable {
  tenant_id: Int8;
  client_id: string;
  created_at: Timestamp;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  public_jwk: Json<Record<string, unknown>>;
  /** private JWK, sealed with the service encryption key (see crypto/sealed-box.ts) */
  private_jwk_sealed: string;
  created_at: Timestamp;
  /** from when it signs (published from created_at: the pre-publication period lies between) */
  signs_from: Timestamp;
  /** until when it signs: its successor's signs_from; null while no successor is planned */
  signs_until: NullableTimestamp;
  /** retired at once (an emergency): neither published nor trusted from then on */
  retired_at: NullableTimestamp;
}

export interface AuditEventsTable {
  id: string;
  occurred_at: Timestamp;
  tenant_id: Int8;
  actor_kind: string;
  actor_id: string;
  action: string;
  target_kind: string;
  target_id: string;
  details: Json<Record<string, unknown>>;
  /** the actor's home tenant; null for the system, an operator, or rows older than 20261130T1200 */
  actor_tenant_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** 'success' | 'failure' | 'refused' */
  outcome: ColumnType<string, string | undefined, string>;
  request_id: ColumnType<string | null, string | null | undefined, string | null>;
  address: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ProcessHeartbeatsTable {
  process_id: string;
  host: string;
  pid: number;
  version: string;
  started_at: Timestamp;
  last_seen_at: Timestamp;
}

export interface SessionsTable {
  /** SHA-256 of the cookie's secret */
  id_hash: Uint8Array;
  /** null while anonymous (a sign-in under way) */
  user_id: string | null;
  signed_in_at: NullableTimestamp;
  state: Json<Record<string, unknown>>;
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
}

/** Attempt counts (attempts/model.ts): attempts counted before their secret is checked; a
 *  success takes its attempt back. */
export interface SignInFailuresTable {
  /** `<kind>:<value>` (attempts/model.ts, attemptKey) */
  key: string;
  failures: number;
  first_failure_at: Timestamp;
  last_failure_at: Timestamp;
  /** the last attempt before the latest: where a given-back attempt leaves the count's time */
  previous_failure_at: NullableTimestamp;
}

/** Browsers that signed in to an account before (signin/recognised-browser.ts). */
export interface RecognisedBrowsersTable {
  /** SHA-256 of the browser cookie's secret */
  browser_hash: Uint8Array;
  user_id: string;
  recognised_at: Timestamp;
  expires_at: Timestamp;
}

export interface DeviceAuthorizationsTable {
  /** SHA-256 of the device code */
  device_code_hash: Uint8Array;
  user_code: string;
  client_id: string;
  login_hint: string;
  status: 'pending' | 'approved' | 'denied' | 'issued';
  user_id: string | null;
  interval_seconds: number;
  last_polled_at: NullableTimestamp;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** the address the device login was started from; null before 20261124T1200 */
  requested_from: string | null;
}

export type SsoConnectionStatus = 'Created' | 'Testing' | 'Enabled' | 'Disabled';

export interface SsoConnectionsTable {
  id: string;
  tenant_id: Int8;
  name: string;
  type: 'saml';
  status: SsoConnectionStatus;
  /** the IdP's entity id (from its metadata), the expected Issuer of its responses */
  idp_entity_id: string | null;
  /** the IdP's HTTP-Redirect (or POST) SingleSignOnService */
  sign_in_endpoint: string | null;
  metadata_url: string | null;
  metadata_refreshed_at: NullableTimestamp;
  /** why the last scheduled refresh failed; null after a success */
  metadata_refresh_error: string | null;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SsoConnectionDomainsTable {
  /** lower-case, IDNA ASCII; claimed by several connections at most one of which has it proven
   *  (primary key: connection_id, domain; unique where status = 'proven') */
  domain: string;
  connection_id: string;
  created_at: Timestamp;
  status: 'pending' | 'proven' | 'lost';
  /** SHA-256 of the TXT value shown once; null for a claim older than the proofs (migration 20261201T1000) */
  challenge_hash: Uint8Array | null;
  proven_at: NullableTimestamp;
  checked_at: NullableTimestamp;
  /** what the last check found wrong; null after a success */
  check_error: string | null;
  /** the first failed re-check of a proven domain since it last passed */
  failing_since: NullableTimestamp;
  next_check_at: Timestamp;
}

export interface SsoConnectionTestersTable {
  connection_id: string;
  email: string;
  created_at: Timestamp;
}

export interface SsoCertificatesTable {
  id: string;
  connection_id: string;
  name: string | null;
  pem: string;
  fingerprint_sha256: string;
  issuer: string;
  subject: string;
  not_before: Timestamp;
  expires_at: Timestamp;
  /** read from the metadata URL (replaced by a refresh) rather than given by hand */
  from_metadata: boolean;
  created_at: Timestamp;
}

export interface SamlRequestsTable {
  /** the AuthnRequest's ID, which the response's InResponseTo must name */
  id: string;
  connection_id: string;
  /** SHA-256 of the browser session that began the sign-in: only that browser may finish it */
  session_id_hash: Uint8Array;
  /** the address the person typed at /login, if any */
  email: string | null;
  /** set when the IdP's response was accepted: who signs in */
  user_id: string | null;
  /** SHA-256 of the one-time ticket the browser brings back (with its session cookie) to finish */
  ticket_hash: Uint8Array | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface SamlAssertionsUsedTable {
  connection_id: string;
  assertion_id: string;
  /** kept until the assertion could no longer be accepted anyway */
  expires_at: Timestamp;
}

export interface SsoIdentitiesTable {
  connection_id: string;
  /** the NameID as the IdP sent it, whole */
  name_id: string;
  user_id: string;
  created_at: Timestamp;
  last_sign_in_at: NullableTimestamp;
}

/** RFC 7009 revocations (oauth/revocation-store.ts), kept until the token's expiry */
export interface RevokedTokensTable {
  jti: string;
  tenant_id: Int8;
  expires_at: Timestamp;
}

export interface TokenFailuresTable {
  /** `pair:<client id> <address>` or `address:<address>` (oauth/failure-throttle.ts) */
  key: string;
  failures: number;
  /** the window's first failure */
  window_start: Timestamp;
}

export interface TokenTrustTable {
  address: string;
  client_id: string;
  /** the last success recorded (at most one per process every half window) */
  trusted_at: Timestamp;
}

/** maintained by triggers on tenant_closure (migration 20261127T1000); the app only folds it */
export interface TenantSubtreeSizesTable {
  /** rows of one ancestor add up to its subtree's size, itself included */
  ancestor_id: Int8;
  delta: Int8;
}

export interface IdempotencyKeysTable {
  /** `client:<uuid>` or `user:<uuid>` (idempotency/model.ts callerKey) */
  caller: string;
  key: string;
  /** SHA-256 of the request's shape */
  fingerprint: Uint8Array;
  /** the claim that holds the key (idempotency/model.ts KeyClaim.claimId) */
  claim_id: string;
  state: 'running' | 'committed' | 'done';
  answer_sealed: string | null;
  created_at: Timestamp;
  locked_until: Timestamp;
  expires_at: Timestamp;
}

export interface Database {
  tenants: TenantsTable;
  tenant_closure: TenantClosureTable;
  tenant_subtree_sizes: TenantSubtreeSizesTable;
  tenant_environments: TenantEnvironmentsTable;
  tenant_labels: TenantLabelsTable;
  services: ServicesTable;
  partner_subscriptions: PartnerSubscriptionsTable;
  tenant_subscriptions: TenantSubscriptionsTable;
  users: UsersTable;
  user_recovery_codes: UserRecoveryCodesTable;
  passkeys: PasskeysTable;
  sessions: SessionsTable;
  sign_in_failures: SignInFailuresTable;
  recognised_browsers: RecognisedBrowsersTable;
  token_failures: TokenFailuresTable;
  revoked_tokens: RevokedTokensTable;
  token_trust: TokenTrustTable;
  device_authorizations: DeviceAuthorizationsTable;
  clients: ClientsTable;
  client_secrets: ClientSecretsTable;
  role_assignments: RoleAssignmentsTable;
  client_creations: ClientCreationsTable;
  signing_keys: SigningKeysTable;
  audit_events: AuditEventsTable;
  process_heartbeats: ProcessHeartbeatsTable;
  sso_connections: SsoConnectionsTable;
  sso_connection_domains: SsoConnectionDomainsTable;
  sso_connection_testers: SsoConnectionTestersTable;
  sso_certificates: SsoCertificatesTable;
  saml_requests: SamlRequestsTable;
  saml_assertions_used: SamlAssertionsUsedTable;
  sso_identities: SsoIdentitiesTable;
  mail_outbox: MailOutboxTable;
  idempotency_keys: IdempotencyKeysTable;
}
