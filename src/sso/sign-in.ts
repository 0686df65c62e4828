// Signing a person in through an SSO connection (docs/sso.md, "Sign-in"): SP-initiated, the
// browser sent to the IdP by HTTP-Redirect, the response posted back to the connection's ACS.
//
// The ACS is posted from the IdP's site, so the SameSite=Lax session cookie does not come with it.
// The response is verified there; the request it answers names the browser session that began the
// sign-in, and the ACS sends the browser on (a top-level GET, which carries the cookie) with a
// one-time ticket to /sso/saml/finish, which signs in only that session. A response carried into
// another browser (login CSRF) therefore signs nobody in.
//
// The sign-in flow (signin/service.ts) decides when a browser goes to an IdP; this is the SAML
// half it calls. Refusals are returned as values (errors.ts, Refusal), as every browser flow's
// are; inside, an SsoRefusal is thrown, so that a refusal met in a transaction rolls it back.
import { randomBytes } from 'node:crypto';
import { ROLE_IDS } from '../access/roles.js';
import { principalEvent, type RequestInfo } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, isOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import { AppError, DuplicateKeyError, type Refusal, refusal } from '../errors.js';
import { isCanonicalUuid } from '../ids.js';
import type { IssuedSession, Session, SessionLifecycle } from '../sessions/model.js';
import type { SessionStore } from '../sessions/store.js';
import type { TenantStore } from '../tenants/store.js';
import type { Transactional } from '../transaction.js';
import { addUser } from '../users/creation.js';
import { proveEmail } from '../users/email-proof.js';
import { checkDisplayName, checkEmail, emailKey } from '../users/model.js';
import type { User } from '../users/model.js';
import type { UserStore } from '../users/store.js';
import type { Profile } from '@node-saml/node-saml';
import {
  checkAssertion,
  MAX_SAML_RESPONSE_BASE64,
  SamlResponseRefused,
  type SignedResponse,
  screenSamlResponse,
  verifySignature,
} from './assertion-checks.js';
import { provenDomains } from './domain-proof.js';
import { configured, domainOf, spParameters, type SsoConnection, tooLargeMessage, usableCertificates } from './model.js';
import { CLOCK_SKEW_MS, REQUEST_TTL_MS, serviceProvider, spMetadata } from './saml-sp.js';
import type { SamlRequestRow, SsoStore } from './store.js';

export interface SsoSignInStores {
  sso: SsoStore;
  users: Pick<UserStore, 'findUser' | 'findUsersByEmail' | 'findProvenUser' | 'insertUser' | 'insertRoleAssignments' | 'proveEmail'>;
  tenants: Pick<TenantStore, 'findScope' | 'findTenant'>;
  audit: AuditStore;
  /** who began a test sign-in (its request names their session) */
  sessions: Pick<SessionStore, 'findSession'>;
}

/** The request ids of test sign-ins (an Administrator's, from the console) begin with this: the
 *  IdP returns the id signed, as InResponseTo, so the ACS knows a test run and signs nobody in. */
const TEST_REQUEST_PREFIX = '_test';

/** Why a person the IdP vouched for is not let in through a connection. */
export type SignInRefusedFor =
  | 'not-an-address'
  | 'other-domain'
  | 'domain-not-proven'
  | 'not-a-tester'
  | 'disabled'
  | 'other-organisation'
  | 'claimed-elsewhere';

/**
 * What signing a NameID in through a connection does, decided without writing anything
 * (SsoSignInService.decide): the sign-in carries it out, a test sign-in only reports it.
 */
export type SignInDecision =
  /** the identity signed in before: the account it is linked to */
  | { kind: 'linked'; userId: string; tenantId: string; email: string; provesAddress: boolean }
  /** the account with the address, of the connection's tenant or below: linked, then signed in */
  | { kind: 'link'; userId: string; tenantId: string; email: string; provesAddress: boolean }
  /** nobody has the address: a new user of the connection's tenant, with the Analyst role (the
   *  sign-in proves its address) */
  | { kind: 'create'; email: string }
  /** nobody is signed in; `userId`: the account it would have been, if any */
  | { kind: 'refused'; why: SignInRefusedFor; userId?: string; email?: string };

/** What the ACS found in a test sign-in's response: who the IdP signed in, what it sent, what the
 *  sign-in would have done, and what (in a person's words) would keep that person from signing
 *  in; nobody was signed in. */
export interface TestSignInResult {
  kind: 'tested';
  connectionName: string;
  nameId: string;
  attributes: Record<string, string[]>;
  /** what a sign-in would have done (the sign-in's own decision) */
  decision: SignInDecision;
  /** empty when the person would be signed in */
  problems: string[];
}

/** How long the browser has to bring the ticket back after the ACS accepted the response. */
const TICKET_TTL_MS = 2 * 60_000;

/** Why a sign-in through a connection did not happen, thrown inside this module (a transaction
 *  it interrupts rolls back); the public methods return it as a Refusal (`refusing`). */
class SsoRefusal extends Error {
  constructor(
    message: string,
    readonly status: Refusal['status'] = 400,
    /** what was wrong, for the log only (never shown: it may describe the IdP's XML) */
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'SsoRefusal';
  }
}

/** The work's result, or its SsoRefusal as a Refusal value; any other failure goes on up. */
async function refusing<T>(work: () => Promise<T>): Promise<T | Refusal> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof SsoRefusal)) throw err;
    return refusal(err.status, err.message, err.reason === undefined ? {} : { reason: err.reason });
  }
}

/** A response refused for what it is: the person is told only that it could not be accepted. */
const rejected = (reason: string) => new SsoRefusal(REJECTED, 400, reason);

const tooLarge = (reason: string) => new SsoRefusal(tooLargeMessage(MAX_SAML_RESPONSE_BASE64 / 1024), 413, reason);

const NOT_AVAILABLE = 'Single sign-on through this connection is not available. Ask your administrator, or sign in with your password.';
const REJECTED = "The identity provider's answer could not be accepted. Start the sign-in again; if it keeps failing, tell your administrator.";

export class SsoSignInService {
  constructor(
    private readonly store: Transactional<SsoSignInStores>,
    private readonly sessions: Pick<SessionLifecycle, 'signIn'>,
    private readonly clock: Clock,
    private readonly settings: { baseUrl: string },
  ) {}

  /**
   * The connection an address signs in through, if any: its domain is a connection's that is
   * Enabled, or Testing with the address among its testers. An account that already exists in a
   * tenant outside the connection's keeps its own sign-in. Only a domain the connection has proven
   * by DNS routes (the store's lookup): for a pending or lost one this answers as for any domain.
   */
  async connectionFor(email: string): Promise<SsoConnection | undefined> {
    const key = emailKey(email);
    const domain = domainOf(key);
    if (!domain) return undefined;
    const connection = await this.store.sso.connectionForDomain(domain);
    if (!connection || !admits(connection, key)) return undefined;
    const account = await this.accountFor(this.store, key, connection);
    if (account.kind === 'elsewhere') return undefined;
    const user = account.kind === 'own' ? account.user : undefined;
    // a connection that cannot sign anyone in now (its certificates expired) does not lock out
    // those who have a password, its Administrators among them; the others are told why
    if (!configured(connection, this.clock.now()) && user?.passwordSet) return undefined;
    return connection;
  }

  /** Where to send the browser to begin signing in through a connection (an IdP URL). */
  start(connectionId: string, session: Session, email: string | null): Promise<{ kind: 'idp'; url: string } | Refusal> {
    return refusing(async () => ({ kind: 'idp' as const, url: await this.authorizeUrl(connectionId, session, email) }));
  }

  /**
   * A test sign-in through a connection, from the console: where to send the browser (the IdP).
   * The caller has checked that the viewer manages the connection (SsoService.get). Its response
   * signs nobody in: the ACS shows what it received (acs, 'tested').
   */
  startTest(connectionId: string, session: Session): Promise<{ kind: 'idp'; url: string } | Refusal> {
    return refusing(async () => ({ kind: 'idp' as const, url: await this.authorizeUrl(connectionId, session, null, TEST_REQUEST_PREFIX) }));
  }

  private async authorizeUrl(connectionId: string, session: Session, email: string | null, prefix = '_'): Promise<string> {
    const connection = await this.usable(connectionId);
    const now = this.clock.now();
    // the request's id, chosen here so that it is stored before the browser can answer it
    const id = `${prefix}${randomBytes(20).toString('hex')}`;
    const url = await (await this.sp(connection, id)).getAuthorizeUrlAsync('', undefined, {});
    await this.store.sso.insertSamlRequest({
      id,
      connectionId: connection.id,
      sessionIdHash: session.idHash,
      email: email === null ? null : emailKey(email),
      createdAt: now,
      expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
    });
    return url;
  }

  /**
   * The ACS: verifies the IdP's response and records who it signs in; answers the ticket the
   * browser brings to /sso/saml/finish, or a refusal with words for the person.
   *
   * Once a signature by the connection's certificate has verified, the assertion is genuine: a
   * refusal for any later reason (no request or someone else's, a wrong envelope, a person not
   * admitted) records its ID as used, so that it can never be accepted later, in another
   * envelope. Nothing is recorded for a response without a valid signature: made-up XML cannot
   * use up the IDs of genuine assertions.
   */
  acs(
    connectionId: string,
    form: { SAMLResponse?: unknown; RelayState?: unknown },
    request?: RequestInfo,
  ): Promise<{ kind: 'accepted'; ticket: string } | TestSignInResult | Refusal> {
    return refusing(async () => {
      const done = await this.verify(connectionId, form, request);
      return typeof done === 'string' ? { kind: 'accepted' as const, ticket: done } : done;
    });
  }

  private async verify(
    connectionId: string,
    form: { SAMLResponse?: unknown; RelayState?: unknown },
    request?: RequestInfo,
  ): Promise<string | TestSignInResult> {
    if (typeof form.SAMLResponse !== 'string' || form.SAMLResponse === '') throw new SsoRefusal('The identity provider sent no SAML response.');
    const samlResponse = form.SAMLResponse;
    const connection = await this.usable(connectionId);
    const screened = refusedAs(() => screenSamlResponse(samlResponse));
    const now = this.clock.now();
    const certificates = usableCertificates(connection, now).map((c) => c.pem);
    const signed = refusedAs(() => verifySignature(screened, certificates, { now, clockSkewMs: CLOCK_SKEW_MS }));
    try {
      return await this.accept(connection, samlResponse, signed, now, request);
    } catch (err) {
      // outside the sign-in's transaction, which a refusal rolled back. Should the record fail,
      // that fault is what the caller sees (a 500, logged): a refusal that left the assertion
      // usable must not pass for a plain one.
      try {
        await this.store.sso.useAssertion(connection.id, signed.assertionId, signed.rememberUntil);
      } catch (recordFault) {
        const why = err instanceof SsoRefusal ? (err.reason ?? err.message) : String(err);
        throw new Error(`recording refused SAML assertion ${signed.assertionId} as used failed (refused for: ${why})`, { cause: recordFault });
      }
      // a genuine (signed) response refused is an event of the connection's tenant: its
      // Administrators see who the IdP vouched for and why it was not let in. A response whose
      // signature does not verify writes none (anyone can post made-up XML).
      if (err instanceof SsoRefusal) {
        await this.store.audit.insertEvent({
          ...systemEvent(connection, now, 'sso.sign_in_refused', 'unknown', { connection_id: connection.id, reason: err.reason ?? err.message }),
          target: { kind: 'sso_connection', id: connection.id },
          outcome: 'refused',
          request: request ?? null,
        });
      }
      throw err;
    }
  }

  /** The rest of the ACS, on a response whose signature verified (see acs). */
  private async accept(
    connection: SsoConnection,
    samlResponse: string,
    signed: SignedResponse,
    now: Date,
    request?: RequestInfo,
  ): Promise<string | TestSignInResult> {
    const sp = spParameters(this.settings.baseUrl, connection.id);
    const sso = readingRequestsOnce(this.store.sso);
    let profile: Profile | null;
    try {
      ({ profile } = await (await this.sp(connection, undefined, sso)).validatePostResponseAsync({ SAMLResponse: samlResponse }));
    } catch (err) {
      throw rejected(`node-saml: ${(err as Error).message}`);
    }
    if (!profile) throw rejected('node-saml returned no profile');
    // what node-saml leaves to the service provider, read from what the signatures cover
    const accepted = refusedAs(() =>
      checkAssertion(signed.envelope, signed.assertionXml, {
        acsUrl: sp.postBackURL,
        idpEntityId: connection.idpEntityId ?? undefined,
        now,
        clockSkewMs: CLOCK_SKEW_MS,
      }),
    );
    // read once: node-saml read it already (see readingRequestsOnce)
    const samlRequest = await sso.findOpenSamlRequest(connection.id, accepted.inResponseTo, now);
    if (!samlRequest) throw rejected('the request it answers is not open');
    const nameId = accepted.nameId;
    if (samlRequest.id.startsWith(TEST_REQUEST_PREFIX)) return await this.tested(connection, samlRequest, accepted, profile, now, request);

    const ticket = newOpaqueToken();
    await this.store.transaction(async (tx) => {
      if (!(await tx.sso.useAssertion(connection.id, accepted.assertionId, accepted.rememberUntil))) throw rejected('assertion replayed');
      const userId = await this.userFor(tx, connection, nameId, displayNameOf(profile), now);
      if (!(await tx.sso.completeSamlRequest(samlRequest.id, userId, digestOpaqueToken(ticket), new Date(now.getTime() + TICKET_TTL_MS)))) {
        throw rejected('the request was answered already');
      }
    });
    return ticket;
  }

  /** A test sign-in's verified response: the assertion used up, the test's request closed, and
   *  the sign-in's own decision (decide) reported, with what would keep the person from signing
   *  in, in words; nobody is signed in. Its audit event, in the same transaction, names the
   *  tester, the connection and the outcome (never the assertion). */
  private async tested(
    connection: SsoConnection,
    samlRequest: SamlRequestRow,
    accepted: { assertionId: string; rememberUntil: Date; nameId: string },
    profile: Profile,
    now: Date,
    request?: RequestInfo,
  ): Promise<TestSignInResult> {
    const { nameId } = accepted;
    const decision = await this.store.transaction(async (tx) => {
      if (!(await tx.sso.useAssertion(connection.id, accepted.assertionId, accepted.rememberUntil))) throw rejected('assertion replayed');
      // a test is answered once
      if (!(await tx.sso.closeSamlRequest(connection.id, samlRequest.id))) throw rejected('the request was answered already');
      const decided = await this.decide(tx, connection, nameId);
      await tx.audit.insertEvent(await testEvent(tx, connection, samlRequest, nameId, decided, now, request));
      return decided;
    });
    const problems = decision.kind === 'refused' ? [testProblem(decision, connection, nameId)] : [];
    const attributes: Record<string, string[]> = {};
    for (const [name, value] of Object.entries((profile.attributes ?? {}) as Record<string, unknown>)) {
      attributes[name] = (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
    }
    return { kind: 'tested', connectionName: connection.name, nameId, attributes, decision, problems };
  }

  /** /sso/saml/finish: the browser that began the sign-in brings the ticket; its session is signed in. */
  finish(ticket: unknown, session: Session | undefined, request?: RequestInfo): Promise<{ kind: 'signedIn'; issued: IssuedSession } | Refusal> {
    return refusing(async () => ({ kind: 'signedIn' as const, issued: await this.signIn(ticket, session, request) }));
  }

  private async signIn(ticket: unknown, session: Session | undefined, request?: RequestInfo): Promise<IssuedSession> {
    if (!isOpaqueToken(ticket)) throw new SsoRefusal('This sign-in link is not valid. Start again.');
    const now = this.clock.now();
    const done = await this.store.sso.takeCompletedSamlRequest(digestOpaqueToken(ticket), now);
    if (!done) throw new SsoRefusal('This sign-in has expired or was already used. Start again.');
    if (!session || session.userId !== null || !Buffer.from(done.sessionIdHash).equals(Buffer.from(session.idHash))) {
      throw new SsoRefusal('This sign-in was started in another browser. Start again here.', 403);
    }
    const user = await this.store.users.findUser(done.userId);
    if (!user || user.disabledAt) throw new SsoRefusal('Your account is disabled. Ask your administrator.', 403);
    if (user.emailStatus === 'claimed_elsewhere') throw new SsoRefusal(REFUSED_FOR['claimed-elsewhere'](user.email), 403);
    // the connection may have changed in the moments since the ACS: judged again now
    const connection = await this.usable(done.connectionId);
    if (!admits(connection, user.emailNormalized)) {
      throw new SsoRefusal('This connection is being tested: only its testers can sign in through it for now. Sign in with your password.', 403);
    }
    await this.store.audit.insertEvent(
      principalEvent(
        { kind: 'user', id: user.id, tenantId: user.tenantId, ...(request ? { request } : {}) },
        now,
        user.tenantId,
        'user.signed_in',
        { kind: 'user', id: user.id },
        { method: 'sso', connection_id: connection.id },
      ),
    );
    return this.sessions.signIn(session, user.id, session.state.returnTo ?? '/console');
  }

  /** The name of a connection that can sign people in now (else a refusal saying why). */
  usableName(connectionId: string): Promise<{ kind: 'usable'; name: string } | Refusal> {
    return refusing(async () => ({ kind: 'usable' as const, name: (await this.usable(connectionId)).name }));
  }

  /** This service's SP metadata for a connection (any status but deleted). */
  async metadata(connectionId: string): Promise<{ kind: 'metadata'; xml: string } | Refusal> {
    const connection = await this.find(connectionId);
    if (!connection) return refusal(404, 'No such SSO connection.');
    const xml = await spMetadata(connection, spParameters(this.settings.baseUrl, connection.id), this.store.sso, () => this.clock.now());
    return { kind: 'metadata', xml };
  }

  /** The connection if it can sign anyone in now; else a refusal that says why. */
  private async usable(connectionId: string): Promise<SsoConnection> {
    const connection = await this.find(connectionId);
    if (!connection) throw new SsoRefusal('No such SSO connection.', 404);
    if (connection.status !== 'Testing' && connection.status !== 'Enabled') throw new SsoRefusal(NOT_AVAILABLE, 403);
    const tenant = await this.store.tenants.findTenant(connection.tenantId);
    if (!tenant?.enabled) {
      throw new SsoRefusal(
        "Your organisation's access to this service is suspended, so nobody can sign in through its connection. Ask your administrator.",
        403,
      );
    }
    const now = this.clock.now();
    if (!connection.signInEndpoint) throw new SsoRefusal(NOT_AVAILABLE, 403);
    if (usableCertificates(connection, now).length === 0) {
      const last = connection.certificates.reduce<Date | undefined>((a, c) => (a && a > c.expiresAt ? a : c.expiresAt), undefined);
      throw new SsoRefusal(
        `This connection's identity-provider certificate ${last && last <= now ? `expired on ${last.toISOString().slice(0, 10)}` : 'is not valid yet'}, so nobody can sign in through it. Ask your administrator to add the identity provider's current certificate.`,
        403,
      );
    }
    return connection;
  }

  /** The connection with this id from a URL: anything but a UUID as this service writes them is
   *  no connection (never handed to the database, whose uuid type would call it an error). The
   *  URL names no tenant: the connection's own is judged (usable). */
  private async find(connectionId: string): Promise<SsoConnection | undefined> {
    return isCanonicalUuid(connectionId) ? await this.store.sso.findConnectionForSignIn(connectionId) : undefined;
  }

  private sp(connection: SsoConnection, requestId?: string, sso: SsoStore = this.store.sso) {
    const now = this.clock.now();
    return serviceProvider(
      connection,
      spParameters(this.settings.baseUrl, connection.id),
      usableCertificates(connection, now).map((c) => c.pem),
      sso,
      () => this.clock.now(),
      requestId,
    );
  }

  /**
   * The account an address has for a connection: one of the connection's tenant (or below), to
   * link; `elsewhere`, when an account of another tenant has PROVEN the address (never taken over,
   * and it keeps its own sign-in); or none. An account elsewhere that nobody proved blocks nothing
   * (docs/users.md, the squatting rule): it must not keep a domain's owner from its own IdP.
   */
  private async accountFor(
    stores: Pick<SsoSignInStores, 'users' | 'tenants'>,
    key: string,
    connection: SsoConnection,
  ): Promise<{ kind: 'own'; user: User } | { kind: 'elsewhere' } | { kind: 'none' }> {
    for (const user of await stores.users.findUsersByEmail(key)) {
      if (await this.belongs(user.tenantId, connection, stores.tenants)) return { kind: 'own', user };
      if (user.emailStatus === 'verified') return { kind: 'elsewhere' };
    }
    return { kind: 'none' };
  }

  /** Whether a user whose home is `tenantId` belongs to the connection's tenant (it or below). */
  private async belongs(tenantId: string, connection: SsoConnection, tenants = this.store.tenants): Promise<boolean> {
    if (tenantId === connection.tenantId) return true;
    const scope = await tenants.findScope(tenantId);
    return scope?.path.split('.').includes(connection.tenantId) === true;
  }

  /**
   * What signing `nameId` in through the connection does, read only (no write): the NameID, read
   * whole, must be an address in one of the connection's domains, of a tester while it is Testing;
   * then it is the user it signed in as before (findIdentity); else the account with that address
   * if it belongs to the connection's tenant (to be linked); else a new user of the connection's
   * tenant (docs/sso.md). An account of another tenant with the address is never taken over. The
   * sign-in (userFor) carries the decision out in its transaction; a test sign-in reports it.
   */
  async decide(stores: Pick<SsoSignInStores, 'sso' | 'users' | 'tenants'>, connection: SsoConnection, nameId: string): Promise<SignInDecision> {
    let key: string;
    try {
      key = checkEmail(nameId, 'NameID').key;
    } catch {
      return { kind: 'refused', why: 'not-an-address' };
    }
    const domain = domainOf(key);
    if (!domain || !connection.domains.includes(domain)) return { kind: 'refused', why: 'other-domain' };
    // a domain claimed but not proven by DNS links and creates nobody (docs/sso.md)
    if (!provenDomains(connection).includes(domain)) return { kind: 'refused', why: 'domain-not-proven' };
    if (!admits(connection, key)) return { kind: 'refused', why: 'not-a-tester' };
    const known = await stores.sso.findIdentity(connection.id, nameId);
    if (known) {
      const user = await stores.users.findUser(known.userId);
      if (!user || user.disabledAt) return { kind: 'refused', why: 'disabled', userId: known.userId, ...(user ? { email: user.email } : {}) };
      // the account gave way to one that proved its address before this sign-in could (docs/users.md)
      if (user.emailStatus === 'claimed_elsewhere') return { kind: 'refused', why: 'claimed-elsewhere', userId: user.id, email: user.email };
      // proves the account's address when it is the NameID and nobody proved it yet (an account
      // linked before sign-ins proved addresses; another may have proven it since)
      const provesAddress =
        user.emailStatus === 'unverified' && user.emailNormalized === key && (await stores.users.findProvenUser(key)) === undefined;
      return { kind: 'linked', userId: user.id, tenantId: user.tenantId, email: user.email, provesAddress };
    }
    const account = await this.accountFor(stores, key, connection);
    if (account.kind === 'none') return { kind: 'create', email: nameId };
    if (account.kind === 'elsewhere') return { kind: 'refused', why: 'other-organisation' };
    const existing = account.user;
    if (existing.disabledAt) return { kind: 'refused', why: 'disabled', userId: existing.id, email: existing.email };
    // accountFor answers a proven account first: an unproven one here means nobody proved the address
    return {
      kind: 'link',
      userId: existing.id,
      tenantId: existing.tenantId,
      email: existing.email,
      provesAddress: existing.emailStatus === 'unverified',
    };
  }

  /** The user a (connection, NameID) pair signs in as: decide's decision, carried out (the
   *  identity touched or linked, or the user created), in the sign-in's transaction. */
  private async userFor(tx: SsoSignInStores, connection: SsoConnection, nameId: string, displayName: string, now: Date): Promise<string> {
    const decision = await this.decide(tx, connection, nameId);
    const key = emailKey(nameId);
    switch (decision.kind) {
      case 'refused':
        throw new SsoRefusal(REFUSED_FOR[decision.why](nameId), decision.why === 'not-an-address' ? 400 : 403);
      case 'linked':
        await tx.sso.touchIdentity(connection.id, nameId, now);
        if (decision.provesAddress)
          await this.proveThroughDomain(tx, connection, { id: decision.userId, tenantId: decision.tenantId, email: decision.email }, key, now);
        return decision.userId;
      case 'link':
        await tx.sso.insertIdentity(connection.id, nameId, decision.userId, now);
        await tx.audit.insertEvent(systemEvent(connection, now, 'sso.identity_linked', decision.userId, { nameId }));
        if (decision.provesAddress)
          await this.proveThroughDomain(tx, connection, { id: decision.userId, tenantId: decision.tenantId, email: decision.email }, key, now);
        return decision.userId;
      case 'create': {
        const id = await this.createUser(tx, connection, nameId, displayName, now);
        await this.proveThroughDomain(tx, connection, { id, tenantId: connection.tenantId, email: nameId }, key, now);
        return id;
      }
    }
  }

  /**
   * The IdP of a domain its tenant proved by DNS vouched for the address (decide admits no other
   * domain, and says when the account's address is the NameID and nobody proved it): the address
   * is proven by it (docs/users.md). An account elsewhere that nobody proved gives way, as to a
   * mailed link. The user is of the connection's tenant or below; the audit event goes to its own.
   */
  private async proveThroughDomain(
    tx: SsoSignInStores,
    connection: SsoConnection,
    user: { id: string; tenantId: string; email: string },
    key: string,
    now: Date,
  ): Promise<void> {
    try {
      await proveEmail(tx, { ...user, emailNormalized: key }, 'sso', systemActor(connection), now);
    } catch (err) {
      // another account proved the address since it was looked up
      if (err instanceof DuplicateKeyError && err.key === 'user.provenEmail') {
        throw new SsoRefusal('Another account proved this address while you were signing in. Start the sign-in again.');
      }
      throw err;
    }
  }

  /** A new user of the connection's tenant (Analyst), linked to the NameID. */
  private async createUser(tx: SsoSignInStores, connection: SsoConnection, nameId: string, displayName: string, now: Date): Promise<string> {
    let id: string;
    try {
      id = await addUser(tx, {
        tenantId: connection.tenantId,
        email: checkEmail(nameId, 'NameID'),
        displayName,
        passwordHash: null,
        setup: null,
        roleIds: [ROLE_IDS.Analyst],
        createdAt: now,
        actor: systemActor(connection),
        event: { via: 'sso' },
      });
    } catch (err) {
      // the address was taken since it was looked up (an account created meanwhile)
      // the address was taken since it was looked up (an account created meanwhile), or the
      // tenant's account with it gave way to an account that proved it elsewhere (not looked up)
      if (err instanceof AppError && err.code === 'CONFLICT') {
        throw new SsoRefusal(
          'An account with this address exists but cannot sign in through this connection now: it was created while you were signing in, or another account proved the address. Start the sign-in again; if this repeats, ask your administrator.',
        );
      }
      throw err;
    }
    await tx.sso.insertIdentity(connection.id, nameId, id, now);
    return id;
  }
}

/** The words of a refused sign-in, for the person signing in. */
const REFUSED_FOR: Record<SignInRefusedFor, (nameId: string) => string> = {
  'not-an-address': () => 'The identity provider did not send an e-mail address as the NameID. Tell your administrator.',
  'other-domain': (nameId) => `The identity provider signed in ${nameId}, whose domain this connection does not serve. Tell your administrator.`,
  'domain-not-proven': (nameId) =>
    `The identity provider signed in ${nameId}, whose domain this connection has not proven yet. Tell your administrator.`,
  'not-a-tester': () => 'This connection is being tested: only its testers can sign in through it for now. Sign in with your password.',
  disabled: () => 'Your account is disabled. Ask your administrator.',
  'other-organisation': () =>
    'An account with this address exists in another organisation, so it cannot sign in through this connection. Sign in with your password.',
  'claimed-elsewhere': () =>
    'Another account proved this address, so this one no longer signs in. Ask your administrator: they can give you an account with another address.',
};

/** The words of a refused test sign-in, for the Administrator who ran it: what to change. */
function testProblem(decision: Extract<SignInDecision, { kind: 'refused' }>, connection: SsoConnection, nameId: string): string {
  switch (decision.why) {
    case 'not-an-address':
      return 'The NameID is not an e-mail address: set the IdP to send the e-mail address as the NameID (format emailAddress).';
    case 'other-domain':
      return `${nameId} is not in the connection’s domains (${connection.domains.join(', ')}): add the domain, or sign in at the IdP as someone in them.`;
    case 'domain-not-proven':
      return `${domainOf(nameId) ?? nameId} is not proven yet (or was lost): publish its TXT record _gatehouse-challenge.${domainOf(nameId) ?? ''} and check it; until then nobody in it signs in through the connection.`;
    case 'not-a-tester':
      return `${nameId} is not a tester of this connection, which is Testing: add them as a tester, or sign in as one.`;
    case 'other-organisation':
      return `An account with ${nameId} exists in another organisation: it keeps signing in with its password.`;
    case 'claimed-elsewhere':
      return `The account ${decision.email ?? nameId} gave way to another account that proved its address: it signs in no more.`;
    case 'disabled':
      return decision.email && emailKey(decision.email) !== emailKey(nameId)
        ? `${nameId} signed in before as ${decision.email}, and that account is disabled here.`
        : `The account ${nameId} is disabled here.`;
  }
}

/** A test sign-in's audit event, in the connection's tenant: who ran it (the session that began
 *  it: its user; the connection itself if that session is gone), what the sign-in would have done.
 *  Never the assertion, nor anything of the response beyond the NameID. */
async function testEvent(
  tx: Pick<SsoSignInStores, 'sessions' | 'users'>,
  connection: SsoConnection,
  samlRequest: SamlRequestRow,
  nameId: string,
  decision: SignInDecision,
  now: Date,
  request?: RequestInfo,
) {
  const session = await tx.sessions.findSession(Buffer.from(samlRequest.sessionIdHash));
  const tester = session?.userId ? await tx.users.findUser(session.userId) : undefined;
  const details = {
    connection_id: connection.id,
    name_id: nameId,
    outcome: decision.kind,
    ...(decision.kind === 'refused' ? { reason: decision.why } : {}),
    ...('userId' in decision && decision.userId ? { user_id: decision.userId } : {}),
  };
  const target = { kind: 'sso_connection', id: connection.id };
  if (tester) {
    return principalEvent(
      { kind: 'user', id: tester.id, tenantId: tester.tenantId, ...(request ? { request } : {}) },
      now,
      connection.tenantId,
      'sso.test_sign_in',
      target,
      details,
    );
  }
  return { ...systemEvent(connection, now, 'sso.test_sign_in', 'unknown', details), target, outcome: 'success' as const, request: request ?? null };
}

/**
 * The SSO store as one ACS reads it: each open request it asks for is read once. node-saml asks
 * for the request a response answers twice (its cache provider, saml-sp.ts: for the Response's
 * InResponseTo, then for the SubjectConfirmationData's), and the service once more, from signed
 * content; a request answered meanwhile is still caught by completeSamlRequest, which marks it
 * answered only if it was open.
 */
function readingRequestsOnce(sso: SsoStore): SsoStore {
  const read = new Map<string, ReturnType<SsoStore['findOpenSamlRequest']>>();
  return {
    ...sso,
    findOpenSamlRequest(connectionId, id, now) {
      const key = JSON.stringify([connectionId, id]);
      let found = read.get(key);
      if (!found) {
        found = sso.findOpenSamlRequest(connectionId, id, now);
        read.set(key, found);
      }
      return found;
    },
  };
}

/** Runs a check of assertion-checks.ts, its refusal turned into the page's. */
function refusedAs<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof SamlResponseRefused)) throw err;
    if (err.reason === 'too-large') throw tooLarge(`${err.reason}: ${err.message}`);
    throw rejected(`${err.reason}: ${err.message}`);
  }
}

/** Whether the connection lets this address in now: Enabled for everyone, Testing for its testers. */
function admits(connection: SsoConnection, key: string): boolean {
  return connection.status === 'Enabled' || (connection.status === 'Testing' && connection.testers.includes(key));
}

/** A display name from the usual attributes, if one passes the name rules; else none. */
function displayNameOf(profile: Record<string, unknown>): string {
  for (const key of ['displayName', 'http://schemas.microsoft.com/identity/claims/displayname', 'name']) {
    const value = profile[key];
    if (typeof value !== 'string') continue;
    try {
      return checkDisplayName(value);
    } catch {}
  }
  return '';
}

/** what the service does on a connection's word: the actor of its events */
function systemActor(connection: SsoConnection) {
  return { kind: 'system' as const, id: `sso:${connection.id}` };
}

function systemEvent(connection: SsoConnection, at: Date, action: string, userId: string, details: Record<string, unknown>) {
  return {
    occurredAt: at,
    tenantId: connection.tenantId,
    actor: systemActor(connection),
    action,
    target: { kind: 'user', id: userId },
    details,
  };
}
