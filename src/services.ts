// The use cases, wired once per app to the storage, clock and settings. The storage is whatever
// implements every capability's store interfaces (the persister in src/store, in production and
// in the tests alike); this file names only those interfaces.
import { mailFrom } from './mail/from-address.js';
import { FailureThrottle } from './oauth/failure-throttle.js';
import type { TokenThrottleStore } from './oauth/throttle-store.js';
import { BearerAuthenticator } from './access/authenticate.js';
import type { RevokedTokenStore } from './oauth/revocation-store.js';
import type { IntrospectionDeps } from './oauth/introspection.js';
import type { RevocationDeps } from './oauth/revocation.js';
import type { Caller } from './access/principal.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { LastUsedRecorder } from './credentials/last-used.js';
import { CredentialService, type CredentialStores } from './credentials/service.js';
import type { KeyRing } from './keys/key-ring.js';
import { rotationSettings, type RotationSettings } from './keys/model.js';
import { KeyService, type KeyServiceStores } from './keys/service.js';
import { LabelService, type LabelStores } from './labels/service.js';
import { AccessTokens, CLOCK_SKEW_SECONDS } from './oauth/access-token.js';
import type { PrincipalStore } from './access/store.js';
import type { Transactional } from './transaction.js';
import { SubscriptionService, type SubscriptionStores } from './subscriptions/service.js';
import { createTenantLoaders, type TenantLoaderStores, type TenantLoaders } from './tenants/loaders.js';
import { TenantService, type TenantStores } from './tenants/service.js';
import type { SealedBox } from './crypto/sealed-box.js';
import { DeviceService, type DeviceStores } from './device/service.js';
import { SessionService, type SessionStores } from './sessions/service.js';
import { SignInService, type SignInStores } from './signin/service.js';
import { EmailChangeService, type EmailChangeStores } from './signin/email-change.js';
import { UserService, type UserStores } from './users/service.js';
import { SsoService, type SsoStores } from './sso/service.js';
import { SsoSignInService, type SsoSignInStores } from './sso/sign-in.js';
import { AuditService, type AuditStores } from './audit/service.js';
import { MailService, type MailStores } from './mail/service.js';
import { IdempotencyService, type IdempotencyStores } from './idempotency/service.js';
import { folderTransport, smtpTransport, type MailTransport } from './mail/transports.js';
import type { PasswordHasher } from './users/password.js';

export interface Services {
  clock: Clock;
  credentials: CredentialService;
  tenants: TenantService;
  labels: LabelService;
  subscriptions: SubscriptionService;
  users: UserService;
  sessions: SessionService;
  signIn: SignInService;
  /** a person's own new address (the account page) */
  emailChange: EmailChangeService;
  device: DeviceService;
  sso: SsoService;
  ssoSignIn: SsoSignInService;
  /** reading the audit trail */
  audit: AuditService;
  /** the mail outbox: queued in a use case's transaction, delivered by the mail job */
  mail: MailService;
  /** safe retries of mutations (Idempotency-Key) */
  idempotency: IdempotencyService;
  tokens: AccessTokens;
  /** the token endpoint's guessing throttle (shared counts, oauth/failure-throttle.ts) */
  tokenThrottle: FailureThrottle;
  bearer: BearerAuthenticator;
  /** what RFC 7662 introspection reads (oauth/introspection.ts) */
  introspection: IntrospectionDeps;
  /** what RFC 7009 revocation reads and writes (oauth/revocation.ts) */
  revocation: RevocationDeps;
  keys: KeyRing;
  /** rotation and retirement of the signing keys (the rotation job; `gatehouse keys` makes its own) */
  signingKeys: KeyService;
  /** batch loaders for one request */
  loaders(caller: Caller): TenantLoaders;
}

/** Every store the use cases need, with one transaction over all of them. */
export type ServiceStores = Transactional<
  CredentialStores &
    TenantStores &
    LabelStores &
    SubscriptionStores &
    UserStores &
    SessionStores &
    SignInStores &
    EmailChangeStores &
    DeviceStores &
    SsoStores &
    SsoSignInStores &
    TenantLoaderStores &
    KeyServiceStores &
    AuditStores &
    MailStores &
    IdempotencyStores & { principals: PrincipalStore; tokenThrottle: TokenThrottleStore; revokedTokens: RevokedTokenStore }
>;

/** The signing keys' rotation settings (keys/model.ts), from the configuration. */
export function keyRotationSettings(
  config: Pick<Config, 'signingKeyRotateDays' | 'signingKeyPrepublishHours' | 'tokenTtlSeconds'>,
): RotationSettings {
  return rotationSettings({
    rotateDays: config.signingKeyRotateDays,
    prepublishHours: config.signingKeyPrepublishHours,
    tokenTtlSeconds: config.tokenTtlSeconds,
    clockSkewSeconds: CLOCK_SKEW_SECONDS,
  });
}

export function createServices(deps: {
  config: Config;
  store: ServiceStores;
  clock: Clock;
  keys: KeyRing;
  /** seals what is kept secret at rest (TOTP secrets) */
  box: SealedBox;
  lastUsed: LastUsedRecorder;
  /** where mail goes; default: GATEHOUSE_SMTP_URL's server, else the data folder's outbox folder */
  mailTransport?: MailTransport;
  /** how passwords are hashed and checked; default argon2id (users/password.ts). Tests count its work. */
  passwordHasher?: PasswordHasher;
}): Services {
  const { config, store, clock, keys, box, lastUsed } = deps;
  const mail = new MailService(
    store,
    box,
    clock,
    deps.mailTransport ?? (config.smtpUrl ? smtpTransport(config.smtpUrl) : folderTransport(config.dataDir, box)),
    { from: mailFrom(config), replyTo: config.mailReplyTo, product: config.vendorName },
    config.smtpUrl !== undefined,
  );
  const sessions = new SessionService(store, clock, { idleSeconds: config.sessionIdleSeconds, absoluteSeconds: config.sessionMaxSeconds });
  const tokens = new AccessTokens(
    keys,
    { issuer: config.baseUrl, audience: config.baseUrl, region: config.region, ttlSeconds: config.tokenTtlSeconds },
    clock,
  );
  const tenants = new TenantService(store, clock, { expiryGraceDays: config.expiryGraceDays });
  const bearer = new BearerAuthenticator(tokens, store.principals, store.revokedTokens);
  const ssoSignIn = new SsoSignInService(store, sessions, clock, { baseUrl: config.baseUrl });
  // the sign-in flow decides when a browser goes to an IdP; ssoSignIn is its SAML half
  const signIn = new SignInService(
    store,
    sessions,
    ssoSignIn,
    box,
    clock,
    { issuer: config.vendorName, baseUrl: config.baseUrl, resetTtlSeconds: config.passwordResetTtlSeconds },
    mail,
    deps.passwordHasher,
  );
  return {
    clock,
    credentials: new CredentialService(store, clock, { region: config.region, createLimitPerHour: config.clientCreateLimit }, lastUsed),
    tenants,
    labels: new LabelService(store, clock, tenants),
    subscriptions: new SubscriptionService(store, clock, tenants),
    sessions,
    device: new DeviceService(store, clock, mail, config.devicePollIntervalSeconds),
    sso: new SsoService(store, clock, {
      baseUrl: config.baseUrl,
      environment: config.region,
      metadataRefreshHours: config.ssoMetadataRefreshHours,
      allowPrivateUrls: config.ssoAllowPrivateUrls,
      dnsServers: config.dnsServers ?? null,
      domainRecheckHours: config.ssoDomainRecheckHours,
      domainGraceHours: config.ssoDomainGraceHours,
    }),
    signIn,
    emailChange: new EmailChangeService(
      store,
      clock,
      { baseUrl: config.baseUrl, linkTtlSeconds: config.userSetupTtlSeconds },
      mail,
      (session, code, attempt) => signIn.confirmedByCode(session, code, attempt),
    ),
    ssoSignIn,
    audit: new AuditService(store, clock),
    mail,
    idempotency: new IdempotencyService(store, box, clock),
    users: new UserService(store, clock, { baseUrl: config.baseUrl, setupTtlSeconds: config.userSetupTtlSeconds }, mail),
    tokens,
    tokenThrottle: new FailureThrottle(store.tokenThrottle, clock),
    bearer,
    introspection: { inspector: bearer, principals: store.principals, tenants: store.tenants, clock },
    revocation: { tokens, revoked: store.revokedTokens },
    keys,
    signingKeys: new KeyService(store, box, clock, keyRotationSettings(config)),
    loaders: (caller) => {
      let visibility: ReturnType<TenantService['visibility']> | undefined;
      return createTenantLoaders(store, clock, () => (visibility ??= tenants.visibility(caller.principal)));
    },
  };
}
