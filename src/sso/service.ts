// SSO connection use cases (docs/sso.md): managed in the acting tenant by its Administrators (or a
// partner's above it). Each checks authorization first, then the input, then writes everything it
// changes in one transaction with its audit event: a refused update changes nothing.
import { randomUUID } from 'node:crypto';
import { assertCan } from '../access/policy.js';
import type { Caller, Principal } from '../access/principal.js';
import { type OperatorActor, operatorEvent, principalEvent } from '../audit/model.js';
import type { AuditStore } from '../audit/store.js';
import type { Clock } from '../clock.js';
import { digestOpaqueToken, newOpaqueToken } from '../crypto/opaque-token.js';
import { badInput, conflict, DuplicateKeyError, notFound, rateLimited } from '../errors.js';
import { AttemptGate, type AttemptStores } from '../attempts/gate.js';
import { inWords } from '../time.js';
import { checkUuid } from '../ids.js';
import type { IdpCertificate } from './certificate.js';
import { readIdpConfiguration, type IdpConfiguration } from './idp-configuration.js';
import {
  checkConnectionName,
  checkDomain,
  checkedSet,
  checkStatusMove,
  checkTester,
  checkType,
  configured,
  domainOf,
  MAX_CERTIFICATES,
  MAX_DOMAINS,
  MAX_TESTERS,
  type SsoCertificate,
  type SsoConnection,
  type SsoConnectionStatus,
  type SpParameters,
  spParameters,
} from './model.js';
import { checkSignInEndpoint } from './endpoint.js';
import { dnsTxtLookup, type TxtLookup } from './dns-txt.js';
import { afterCheck, type CheckEvent, challengeName, FAST_RECHECK_MS, type ProofTiming, type ShownDomainProof, shownProofs } from './domain-proof.js';
import type { SsoConnectionPatch, SsoStore } from './store.js';

export interface SsoStores extends AttemptStores {
  sso: SsoStore;
  audit: AuditStore;
}

export interface SsoSettings {
  /** this service's public address: the SP values of every connection are under it */
  baseUrl: string;
  /** what `environment` answers: the deployment's region */
  environment: string;
  /** how often a metadata URL is read again */
  metadataRefreshHours: number;
  /** GATEHOUSE_SSO_ALLOW_PRIVATE_URLS: metadata URLs and sign-in endpoints on loopback/private addresses, http allowed */
  allowPrivateUrls: boolean;
  /** GATEHOUSE_DNS_SERVERS: who is asked for the TXT records that prove domains (null: the system's) */
  dnsServers?: readonly string[] | null;
  /** GATEHOUSE_SSO_DOMAIN_RECHECK_HOURS, GATEHOUSE_SSO_DOMAIN_GRACE_HOURS */
  domainRecheckHours?: number;
  domainGraceHours?: number;
  /** looks a TXT record up (injected in tests; else through dnsServers) */
  lookupTxt?: TxtLookup;
  /** reads an IdP's configuration from a metadata URL or a certificate (injected in tests) */
  readIdp?: (input: { metadataUrl?: string | null; cert?: string | null }, allowPrivateUrls: boolean) => Promise<IdpConfiguration>;
}

export interface NewSsoConnectionInput {
  name: string;
  type: string;
  domains: readonly string[];
  testers?: readonly string[] | null;
}

export interface SamlConfigurationInput {
  metadataURL?: string | null;
  signingCert?: string | null;
  signingCertName?: string | null;
  certName?: string | null;
  signInEndpoint?: string | null;
  entityID?: string | null;
  removeCertificates?: readonly string[] | null;
}

export interface UpdateSsoConnectionInput {
  id: string;
  name?: string | null;
  status?: SsoConnectionStatus | null;
  addTesters?: readonly string[] | null;
  removeTesters?: readonly string[] | null;
  addDomains?: readonly string[] | null;
  removeDomains?: readonly string[] | null;
  connectionConfiguration?: { samlConfiguration?: SamlConfigurationInput | null } | null;
  samlConfiguration?: SamlConfigurationInput | null;
  certName?: string | null;
  signingCertName?: string | null;
}

export class SsoService {
  private readonly readIdp: NonNullable<SsoSettings['readIdp']>;
  private readonly lookupTxt: TxtLookup;
  private readonly timing: ProofTiming;

  /** counts the DNS look-ups and the metadata fetches asked for by hand, per tenant (ATTEMPT_RULES.domainCheck, metadataFetch) */
  private readonly gate: AttemptGate;

  constructor(
    private readonly store: SsoStores & { transaction<T>(fn: (tx: SsoStores) => Promise<T>): Promise<T> },
    private readonly clock: Clock,
    private readonly settings: SsoSettings,
  ) {
    this.readIdp = settings.readIdp ?? readIdpConfiguration;
    this.lookupTxt = settings.lookupTxt ?? dnsTxtLookup(settings.dnsServers ?? null);
    this.gate = new AttemptGate(store, clock);
    this.timing = { recheckMs: (settings.domainRecheckHours ?? 24) * 3_600_000, graceMs: (settings.domainGraceHours ?? 72) * 3_600_000 };
  }

  /** The acting tenant's connections. */
  async list(caller: Caller): Promise<SsoConnection[]> {
    assertCan(caller.principal, caller.tenant, 'sso.manage', this.clock.now());
    return await this.store.sso.listConnections(caller.tenant.id);
  }

  /** One connection of the acting tenant. */
  async get(caller: Caller, id: string): Promise<SsoConnection> {
    assertCan(caller.principal, caller.tenant, 'sso.manage', this.clock.now());
    return await this.inTenant(caller, id, this.store.sso);
  }

  async create(caller: Caller, input: NewSsoConnectionInput): Promise<SsoConnection> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'sso.manage', now);
    const name = checkConnectionName(input.name);
    const type = checkType(input.type);
    const domains = checkedSet(input.domains, (d) => checkDomain(d, 'domains'));
    if (domains.length === 0) throw badInput('domains: name at least one e-mail domain the connection serves', { field: 'domains' });
    if (domains.length > MAX_DOMAINS) throw badInput(`domains: at most ${MAX_DOMAINS}`, { field: 'domains' });
    const testers = checkedSet(input.testers, (t) => checkTester(t, 'testers'));
    if (testers.length > MAX_TESTERS) throw badInput(`testers: at most ${MAX_TESTERS}`, { field: 'testers' });
    checkTestersInDomains(testers, domains);
    const id = randomUUID();
    return await this.store.transaction(async (tx) => {
      await tx.sso.insertConnection({
        id,
        tenantId: caller.tenant.id,
        name,
        type,
        status: 'Created',
        createdBy: actorId(caller.principal),
        createdAt: now,
      });
      const issued = issueChallenges(domains);
      await tx.sso.addDomains(caller.tenant.id, id, issued.claims, now);
      await tx.sso.addTesters(caller.tenant.id, id, testers, now);
      await tx.audit.insertEvent(principalEvent(caller.principal, now, caller.tenant.id, 'sso.created', target(id), { name, domains, testers }));
      return { ...(await tx.sso.findConnection(caller.tenant.id, id))!, issuedChallenges: issued.values };
    });
  }

  async update(caller: Caller, input: UpdateSsoConnectionInput): Promise<SsoConnection> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'sso.manage', now);
    const id = checkUuid(input.id, 'id');
    // everything that can be checked without the connection is checked first: the IdP is read
    // (a network fetch) before the transaction, never while holding the connection's row lock
    const saml = samlInput(input);
    const name = input.name === null || input.name === undefined ? undefined : checkConnectionName(input.name);
    const addDomains = checkedSet(input.addDomains, (d) => checkDomain(d, 'addDomains'));
    const removeDomains = checkedSet(input.removeDomains, (d) => checkDomain(d, 'removeDomains'));
    const addTesters = checkedSet(input.addTesters, (t) => checkTester(t, 'addTesters'));
    const removeTesters = checkedSet(input.removeTesters, (t) => checkTester(t, 'removeTesters'));
    const both = addDomains.filter((d) => removeDomains.includes(d));
    if (both.length > 0) throw badInput(`addDomains and removeDomains both name ${both.join(', ')}`, { field: 'addDomains' });
    const bothTesters = addTesters.filter((t) => removeTesters.includes(t));
    if (bothTesters.length > 0) throw badInput(`addTesters and removeTesters both name ${bothTesters.join(', ')}`, { field: 'addTesters' });
    await this.inTenant(caller, id, this.store.sso);
    if (saml?.metadataURL) await this.countFetch(caller.tenant.id);
    const idp = saml ? await this.readSaml(saml) : undefined;

    return this.store.transaction(async (tx) => {
      const before = await this.inTenant(caller, id, tx.sso, true);
      const patch: SsoConnectionPatch = { updatedAt: now };
      if (name !== undefined && name !== before.name) patch.name = name;

      // domains and testers
      const missingDomains = removeDomains.filter((d) => !before.domains.includes(d));
      if (missingDomains.length > 0)
        throw badInput(`removeDomains: the connection does not serve ${missingDomains.join(', ')}`, { field: 'removeDomains' });
      const newDomains = addDomains.filter((d) => !before.domains.includes(d));
      const domains = [...before.domains.filter((d) => !removeDomains.includes(d)), ...newDomains];
      if (domains.length === 0)
        throw badInput('removeDomains: a connection keeps at least one domain (delete the connection instead)', { field: 'removeDomains' });
      if (domains.length > MAX_DOMAINS) throw badInput(`addDomains: a connection serves at most ${MAX_DOMAINS} domains`, { field: 'addDomains' });
      const missingTesters = removeTesters.filter((t) => !before.testers.includes(t));
      if (missingTesters.length > 0)
        throw badInput(`removeTesters: ${missingTesters.join(', ')} is not a tester of the connection`, { field: 'removeTesters' });
      const testers = [...before.testers.filter((t) => !removeTesters.includes(t)), ...addTesters.filter((t) => !before.testers.includes(t))];
      if (testers.length > MAX_TESTERS) throw badInput(`addTesters: a connection has at most ${MAX_TESTERS} testers`, { field: 'addTesters' });
      checkTestersInDomains(testers, domains);

      // the IdP side
      let certificates = before.certificates;
      const added: SsoCertificate[] = [];
      if (saml) {
        const removeIds = checkedSet(saml.removeCertificates, (c) => checkUuid(c, 'removeCertificates'));
        const unknown = removeIds.filter((c) => !certificates.some((have) => have.id === c));
        if (unknown.length > 0)
          throw badInput(`removeCertificates: the connection has no certificate ${unknown.join(', ')}`, { field: 'removeCertificates' });
        certificates = certificates.filter((c) => !removeIds.includes(c.id));
        if (saml.metadataURL) {
          // configured by metadata: its signing certificates replace those read from metadata before
          certificates = certificates.filter((c) => !c.fromMetadata);
          patch.metadataUrl = saml.metadataURL;
          patch.metadataRefreshedAt = now;
          patch.metadataRefreshError = null;
        } else if (saml.signingCert || saml.signInEndpoint) {
          // configured by hand from now on: a metadata URL is no longer refreshed
          if (before.metadataUrl) patch.metadataUrl = null;
        }
        if (idp?.entityId !== undefined) patch.idpEntityId = idp.entityId;
        if (saml.entityID !== undefined && saml.entityID !== null) patch.idpEntityId = checkEntityId(saml.entityID);
        const endpoint = saml.signInEndpoint ? checkSignInEndpoint(saml.signInEndpoint, this.settings.allowPrivateUrls) : idp?.signInEndpoint;
        if (endpoint) patch.signInEndpoint = endpoint;
        for (const cert of idp?.certificates ?? []) {
          const same = certificates.find((c) => c.fingerprintSha256 === cert.fingerprint256);
          if (same) continue;
          if (!saml.metadataURL && cert.expiresAt <= now) {
            throw badInput(`signingCert expired on ${cert.expiresAt.toISOString()}; give the IdP's current certificate`, { field: 'signingCert' });
          }
          added.push(toCertificate(cert, id, now, saml.metadataURL ? null : certNameOf(input, saml), Boolean(saml.metadataURL)));
        }
        certificates = [...added, ...certificates];
        if (certificates.length > MAX_CERTIFICATES) {
          throw badInput(
            `a connection holds at most ${MAX_CERTIFICATES} signing certificates; remove one first (removeCertificates with its id, e.g. the one expiring ${oldest(certificates)})`,
            { field: 'signingCert' },
          );
        }
        if (certificates.length > 0 && certificates.every((c) => c.expiresAt <= now)) {
          throw badInput("the update would leave the connection with no unexpired signing certificate; add the IdP's current certificate", {
            field: 'signingCert',
          });
        }
      }
      const after = { certificates, signInEndpoint: patch.signInEndpoint ?? before.signInEndpoint };
      const isConfigured = configured(after, now);

      // status: a move asked for is judged from the status before the update (so Enabled comes
      // after Testing, never in the update that configures); configuring moves Created to Testing
      let status = before.status;
      if (input.status && input.status !== before.status) status = checkStatusMove(before.status, input.status, isConfigured);
      if (status === 'Created' && isConfigured) status = 'Testing';
      if ((status === 'Testing' || status === 'Enabled') && !isConfigured) {
        throw badInput(
          'the update would leave the connection without a usable IdP configuration (a sign-in endpoint and an unexpired signing certificate)',
          {
            field: 'samlConfiguration',
          },
        );
      }
      if (status !== before.status) patch.status = status;

      const removedCertificates = before.certificates.filter((c) => !certificates.includes(c)).map((c) => c.id);
      const tenantId = caller.tenant.id;
      await tx.sso.deleteCertificates(tenantId, id, removedCertificates);
      await tx.sso.insertCertificates(tenantId, added);
      await tx.sso.removeDomains(tenantId, id, removeDomains);
      const issued = issueChallenges(newDomains);
      await tx.sso.addDomains(tenantId, id, issued.claims, now);
      await tx.sso.removeTesters(tenantId, id, removeTesters);
      await tx.sso.addTesters(tenantId, id, addTesters, now);
      await tx.sso.updateConnection(tenantId, id, patch);
      await tx.audit.insertEvent(
        principalEvent(caller.principal, now, caller.tenant.id, 'sso.updated', target(id), {
          ...(patch.status ? { status: { from: before.status, to: patch.status } } : {}),
          ...(newDomains.length ? { addedDomains: newDomains } : {}),
          ...(removeDomains.length ? { removedDomains: removeDomains } : {}),
          ...(addTesters.length ? { addedTesters: addTesters } : {}),
          ...(removeTesters.length ? { removedTesters: removeTesters } : {}),
          ...(added.length ? { addedCertificates: added.map((c) => c.fingerprintSha256) } : {}),
          ...(removedCertificates.length ? { removedCertificates } : {}),
          ...(patch.metadataUrl !== undefined ? { metadataUrl: patch.metadataUrl } : {}),
          ...(patch.signInEndpoint ? { signInEndpoint: patch.signInEndpoint } : {}),
        }),
      );
      return { ...(await tx.sso.findConnection(tenantId, id))!, issuedChallenges: issued.values };
    });
  }

  /**
   * checkSSODomain: looks the domain's TXT record up now (besides the periodic check) and records
   * what it found: proven, still pending (with why), or, for a proven domain, failing or lost.
   */
  async checkDomainNow(caller: Caller, connectionId: string, rawDomain: string): Promise<SsoConnection> {
    assertCan(caller.principal, caller.tenant, 'sso.manage', this.clock.now());
    const id = checkUuid(connectionId, 'connectionID');
    const domain = checkDomain(rawDomain, 'domain');
    const connection = await this.inTenant(caller, id, this.store.sso);
    if (!connection.domains.includes(domain)) throw unclaimed(domain);
    // each check queries DNS servers on the tenant's behalf: counted, as sign-in attempts are
    const reservation = await this.gate.reserve([['domainCheck', connection.tenantId]]);
    if (reservation.kind === 'wait') {
      throw rateLimited(
        `Too many domain checks for this tenant: the periodic check goes on meanwhile. Check again in ${inWords(reservation.seconds)}.`,
        reservation.seconds,
      );
    }
    await this.runCheck(connection.tenantId, id, domain, caller.principal);
    return (await this.store.sso.findConnection(connection.tenantId, id))!;
  }

  /**
   * regenerateSSODomainChallenge: a new TXT value for a domain of the connection, answered once
   * (the old one no longer proves it). A proven domain stays proven until its re-checks fail for
   * the grace period: publish the new value before then.
   */
  async regenerateDomainChallenge(caller: Caller, connectionId: string, rawDomain: string): Promise<SsoConnection> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'sso.manage', now);
    const id = checkUuid(connectionId, 'connectionID');
    const domain = checkDomain(rawDomain, 'domain');
    await this.inTenant(caller, id, this.store.sso);
    const value = newOpaqueToken();
    return this.store.transaction(async (tx) => {
      const claim = await tx.sso.findDomainClaim(caller.tenant.id, id, domain, true);
      if (!claim) throw unclaimed(domain);
      await tx.sso.updateDomainClaim(caller.tenant.id, id, domain, {
        challengeHash: digestOpaqueToken(value),
        // a claim that is not proven is checked again soon: the record is about to be published
        ...(claim.status === 'proven' ? {} : { nextCheckAt: new Date(now.getTime() + FAST_RECHECK_MS) }),
      });
      await tx.audit.insertEvent(
        principalEvent(caller.principal, now, caller.tenant.id, 'sso.domain_challenge_regenerated', target(id), { domain, status: claim.status }),
      );
      return { ...(await tx.sso.findConnection(caller.tenant.id, id))!, issuedChallenges: { [domain]: value } };
    });
  }

  /**
   * The periodic check (a job): claims whose next check is due, a few at a time, each looked up
   * and recorded in a transaction of its own. Answers what changed, for the log: a domain lost is
   * a warning there, besides its audit event.
   */
  async checkDomainsDue(limit = 50): Promise<{ checked: number; proven: number; failing: DomainRef[]; lost: DomainRef[] }> {
    const due = await this.store.sso.domainClaimsDue(this.clock.now(), limit);
    const done = { checked: 0, proven: 0, failing: [] as DomainRef[], lost: [] as DomainRef[] };
    // a few at a time: a domain whose DNS does not answer holds its look-up for seconds
    for (let i = 0; i < due.length; i += CHECKS_AT_ONCE) {
      const batch = due.slice(i, i + CHECKS_AT_ONCE);
      const events = await Promise.all(batch.map((c) => this.runCheck(c.tenantId, c.connectionId, c.domain, SYSTEM_CHECK)));
      events.forEach((event, k) => {
        const claim = batch[k]!;
        done.checked += 1;
        if (event === 'proven') done.proven += 1;
        if (event === 'failing') done.failing.push(claim);
        if (event === 'lost') done.lost.push(claim);
      });
    }
    return done;
  }

  /** One check of one claim: the lookup first (outside any transaction), then the claim's new
   *  state with its audit event. Of two connections proving the same domain at once, the second
   *  to write meets the unique index, and is recorded as proven elsewhere. */
  private async runCheck(tenantId: string, connectionId: string, domain: string, actor: Principal | typeof SYSTEM_CHECK): Promise<CheckEvent> {
    const answer = await this.lookupTxt(challengeName(domain));
    const now = this.clock.now();
    const write = (elsewhere: boolean) =>
      this.store.transaction(async (tx) => {
        const claim = await tx.sso.findDomainClaim(tenantId, connectionId, domain, true);
        if (!claim) return undefined;
        const { patch, event } = afterCheck(claim, answer, now, this.timing, claim.provenElsewhere || elsewhere);
        await tx.sso.updateDomainClaim(tenantId, connectionId, domain, patch);
        // the periodic check writes an event when something happened; a check asked for by an
        // Administrator always does (what was found, for the trail)
        const happened = event ?? (actor === SYSTEM_CHECK ? undefined : 'checked');
        if (happened) {
          const details = { domain, status: patch.status ?? claim.status, ...(patch.checkError ? { problem: patch.checkError } : {}) };
          const action = `sso.domain_${happened}`;
          await tx.audit.insertEvent(
            actor === SYSTEM_CHECK
              ? { occurredAt: now, tenantId, actor: { kind: 'system', id: SYSTEM_CHECK }, action, target: target(connectionId), details }
              : principalEvent(actor, now, tenantId, action, target(connectionId), details),
          );
        }
        return event;
      });
    try {
      return await write(false);
    } catch (err) {
      if (err instanceof DuplicateKeyError && err.key === 'sso.domainProven') return await write(true);
      throw err;
    }
  }

  /**
   * `gatehouse sso disable`: the operator disables a connection, whatever its tenant (nobody signs
   * in through it; its settings stay). The same status rule as updateSSOConnection; an event
   * `sso.updated` of the connection's tenant with the operator as actor. Already disabled: nothing
   * changes, no event.
   */
  async disableAsOperator(operator: OperatorActor, rawId: string): Promise<{ connection: SsoConnection; changed: boolean }> {
    const id = checkUuid(rawId, 'connection');
    const now = this.clock.now();
    const found = await this.store.sso.findConnectionForSignIn(id);
    if (!found) throw notFound(`no SSO connection ${id}: check the id (the ssoConnections query lists a tenant's)`);
    return this.store.transaction(async (tx) => {
      const before = await tx.sso.findConnection(found.tenantId, id, true);
      if (!before) throw notFound(`no SSO connection ${id}: it was deleted meanwhile`);
      if (before.status === 'Disabled') return { connection: before, changed: false };
      const status = checkStatusMove(before.status, 'Disabled', configured(before, now));
      await tx.sso.updateConnection(before.tenantId, id, { status, updatedAt: now });
      await tx.audit.insertEvent(
        operatorEvent(operator, now, before.tenantId, 'sso.updated', target(id), { status: { from: before.status, to: status } }),
      );
      return { connection: (await tx.sso.findConnection(before.tenantId, id))!, changed: true };
    });
  }

  /**
   * `gatehouse sso release-domain`: the operator takes a domain from the connection that serves it
   * (another tenant may then claim it). A connection keeps at least one domain, as through the
   * API: its only domain is released by deleting the connection (deleteSSOConnection).
   */
  async releaseDomainAsOperator(operator: OperatorActor, rawDomain: string): Promise<{ connection: SsoConnection; domain: string }> {
    const domain = checkDomain(rawDomain, 'domain');
    const now = this.clock.now();
    const owners = await this.store.sso.domainOwners([domain]);
    if (owners.length === 0) throw notFound(`no SSO connection serves ${domain}: nothing to release`);
    // the connection that routes the domain (proven), else its only claim
    const owner = owners.find((o) => o.status === 'proven') ?? (owners.length === 1 ? owners[0] : undefined);
    if (!owner) {
      throw badInput(
        `${domain} is claimed, not proven, by ${owners.length} connections (${owners.map((o) => o.connectionId).join(', ')}): none routes it, so there is nothing to release; a pending claim blocks nobody`,
        { field: 'domain' },
      );
    }
    const found = await this.store.sso.findConnectionForSignIn(owner.connectionId);
    if (!found) throw notFound(`no SSO connection serves ${domain}: nothing to release`);
    return this.store.transaction(async (tx) => {
      const before = await tx.sso.findConnection(found.tenantId, found.id, true);
      if (!before?.domains.includes(domain)) throw conflict(`${domain} changed hands meanwhile: run the command again`);
      if (before.domains.length === 1) {
        throw badInput(
          `${domain} is the only domain of connection ${before.id} (tenant ${before.tenantId}): a connection keeps at least one; its tenant's Administrator deletes the connection (deleteSSOConnection) to free it`,
          { field: 'domain' },
        );
      }
      await tx.sso.removeDomains(before.tenantId, before.id, [domain]);
      await tx.sso.updateConnection(before.tenantId, before.id, { updatedAt: now });
      await tx.audit.insertEvent(operatorEvent(operator, now, before.tenantId, 'sso.updated', target(before.id), { removedDomains: [domain] }));
      return { connection: (await tx.sso.findConnection(before.tenantId, before.id))!, domain };
    });
  }

  async delete(caller: Caller, id: string): Promise<SsoConnection> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'sso.manage', now);
    const checked = checkUuid(id, 'connectionID');
    return await this.store.transaction(async (tx) => {
      const connection = await this.inTenant(caller, checked, tx.sso, true);
      await tx.sso.deleteConnection(caller.tenant.id, checked);
      await tx.audit.insertEvent(
        principalEvent(caller.principal, now, caller.tenant.id, 'sso.deleted', target(checked), {
          name: connection.name,
          domains: connection.domains,
        }),
      );
      return connection;
    });
  }

  /** refreshSSOConnectionMetadata: the metadata URL read again now; a failure changes nothing. */
  async refreshMetadata(caller: Caller, id: string): Promise<SsoConnection> {
    const now = this.clock.now();
    assertCan(caller.principal, caller.tenant, 'sso.manage', now);
    const connection = await this.inTenant(caller, checkUuid(id, 'connectionID'), this.store.sso);
    if (!connection.metadataUrl) {
      throw badInput('the connection is not configured by a metadata URL (give samlConfiguration.metadataURL first)', { field: 'connectionID' });
    }
    await this.countFetch(connection.tenantId);
    const idp = await this.readIdp({ metadataUrl: connection.metadataUrl }, this.settings.allowPrivateUrls);
    return this.store.transaction(async (tx) => {
      const before = await this.inTenant(caller, connection.id, tx.sso, true);
      const changed = await applyMetadata(tx, before, idp, now);
      await tx.audit.insertEvent(principalEvent(caller.principal, now, caller.tenant.id, 'sso.metadata_refreshed', target(before.id), changed));
      return (await tx.sso.findConnection(before.tenantId, before.id))!;
    });
  }

  /**
   * The scheduled refresh: connections configured by metadata URL and not read for
   * `metadataRefreshHours`, a few at a time. A failure is recorded on the connection (shown as
   * `metadataRefreshError`) and changes nothing else: the certificates held keep working.
   */
  async refreshDue(limit = 20): Promise<{ refreshed: number; failed: number }> {
    const now = this.clock.now();
    const due = await this.store.sso.connectionsToRefresh(new Date(now.getTime() - this.settings.metadataRefreshHours * 3_600_000), limit);
    let refreshed = 0;
    let failed = 0;
    for (const connection of due) {
      try {
        const idp = await this.readIdp({ metadataUrl: connection.metadataUrl }, this.settings.allowPrivateUrls);
        await this.store.transaction(async (tx) => {
          const before = await tx.sso.findConnection(connection.tenantId, connection.id, true);
          if (!before || before.metadataUrl !== connection.metadataUrl) return;
          const changed = await applyMetadata(tx, before, idp, now);
          await tx.audit.insertEvent({
            occurredAt: now,
            tenantId: before.tenantId,
            actor: { kind: 'system', id: 'sso-refresh' },
            action: 'sso.metadata_refreshed',
            target: target(before.id),
            details: changed,
          });
        });
        refreshed += 1;
      } catch (err) {
        failed += 1;
        const reason =
          err instanceof Error && 'code' in err && (err as { code: string }).code === 'BAD_USER_INPUT'
            ? err.message
            : 'the metadata could not be read';
        await this.store.sso.updateConnection(connection.tenantId, connection.id, {
          metadataRefreshedAt: now,
          metadataRefreshError: reason,
          updatedAt: connection.updatedAt,
        });
      }
    }
    return { refreshed, failed };
  }

  /** A connection's domains with their proofs, as shown (the values only of the answer that issued them). */
  domainProofs(connection: SsoConnection): ShownDomainProof[] {
    return shownProofs(connection, this.timing.graceMs);
  }

  /** This service's SAML values for a connection. */
  parameters(connection: Pick<SsoConnection, 'id'>): SpParameters {
    return spParameters(this.settings.baseUrl, connection.id);
  }

  get environment(): string {
    return this.settings.environment;
  }

  /** getSSOConnectionConfig: what a metadata URL or a certificate says, checked, changing nothing. */
  async inspect(caller: Caller, metadataUrl: string | null | undefined, cert: string | null | undefined): Promise<IdpConfiguration> {
    assertCan(caller.principal, caller.tenant, 'sso.manage', this.clock.now());
    if (!metadataUrl && !cert)
      throw badInput("give metadataURL (the IdP's metadata) or cert (its signing certificate, PEM or base64)", { field: 'metadataURL' });
    if (metadataUrl && cert) throw badInput('give metadataURL or cert, not both', { field: 'cert' });
    if (metadataUrl) await this.countFetch(caller.tenant.id);
    return await this.readIdp({ metadataUrl, cert }, this.settings.allowPrivateUrls);
  }

  private async readSaml(saml: SamlConfigurationInput): Promise<IdpConfiguration | undefined> {
    if (saml.metadataURL && (saml.signingCert || saml.signInEndpoint)) {
      throw badInput('give metadataURL, or signingCert and signInEndpoint, not both: the metadata holds the certificate and the endpoint', {
        field: 'metadataURL',
      });
    }
    if (saml.metadataURL) return await this.readIdp({ metadataUrl: saml.metadataURL }, this.settings.allowPrivateUrls);
    if (saml.signingCert) return await this.readIdp({ cert: saml.signingCert }, this.settings.allowPrivateUrls);
    return undefined;
  }

  /**
   * A metadata fetch asked for on the tenant's behalf: each makes this service fetch a URL the
   * tenant chose, so each is counted (ATTEMPT_RULES.metadataFetch), before the fetch.
   */
  private async countFetch(tenantId: string): Promise<void> {
    const reservation = await this.gate.reserve([['metadataFetch', tenantId]]);
    if (reservation.kind === 'wait') {
      throw rateLimited(
        `Too many IdP metadata fetches for this tenant: the scheduled refresh goes on meanwhile. Try again in ${inWords(reservation.seconds)}.`,
        reservation.seconds,
      );
    }
  }

  /** The connection if it belongs to the acting tenant; any other is NOT_FOUND, as if it did not exist. */
  private async inTenant(caller: Caller, id: string, sso: SsoStore, forUpdate = false): Promise<SsoConnection> {
    // the store reads the acting tenant's connections only; the comparison stays as the first line
    const connection = await sso.findConnection(caller.tenant.id, checkUuid(id, 'id'), forUpdate);
    if (!connection || connection.tenantId !== caller.tenant.id) throw notFound('SSO connection');
    return connection;
  }
}

/**
 * Replaces the certificates read from metadata before by those it lists now, and takes its entity
 * id and sign-in endpoint. Refused (BAD_USER_INPUT, nothing written) if that would leave more than
 * three certificates or no unexpired one.
 */
async function applyMetadata(tx: SsoStores, before: SsoConnection, idp: IdpConfiguration, now: Date): Promise<Record<string, unknown>> {
  const kept = before.certificates.filter((c) => !c.fromMetadata);
  const fresh = idp.certificates.filter((c) => !kept.some((k) => k.fingerprintSha256 === c.fingerprint256));
  const unchanged = before.certificates.filter((c) => c.fromMetadata && fresh.some((f) => f.fingerprint256 === c.fingerprintSha256));
  const added = fresh
    .filter((f) => !unchanged.some((u) => u.fingerprintSha256 === f.fingerprint256))
    .map((c) => toCertificate(c, before.id, now, null, true));
  const certificates = [...added, ...unchanged, ...kept];
  if (certificates.length > MAX_CERTIFICATES) {
    throw badInput(`the metadata lists ${fresh.length} signing certificates; a connection holds at most ${MAX_CERTIFICATES}`, {
      field: 'metadataURL',
    });
  }
  if (!certificates.some((c) => c.expiresAt > now)) throw badInput('the metadata lists no unexpired signing certificate', { field: 'metadataURL' });
  // a connection people sign in through keeps a certificate valid now (an IdP that already lists
  // only its next certificate, valid from tomorrow, would otherwise lock everyone out)
  const signInEndpoint = idp.signInEndpoint ?? before.signInEndpoint;
  if ((before.status === 'Testing' || before.status === 'Enabled') && !configured({ certificates, signInEndpoint }, now)) {
    throw badInput(
      `the metadata lists no signing certificate valid now, and the connection is ${before.status}; the certificates held are kept until the IdP publishes one`,
      { field: 'metadataURL' },
    );
  }
  const removed = before.certificates.filter((c) => c.fromMetadata && !unchanged.includes(c)).map((c) => c.id);
  await tx.sso.deleteCertificates(before.tenantId, before.id, removed);
  await tx.sso.insertCertificates(before.tenantId, added);
  const changed = added.length > 0 || removed.length > 0 || idp.entityId !== before.idpEntityId || signInEndpoint !== before.signInEndpoint;
  await tx.sso.updateConnection(before.tenantId, before.id, {
    idpEntityId: idp.entityId ?? before.idpEntityId,
    signInEndpoint,
    metadataRefreshedAt: now,
    metadataRefreshError: null,
    // a refresh that finds nothing new leaves updatedAt as it was
    updatedAt: changed ? now : before.updatedAt,
  });
  return { addedCertificates: added.map((c) => c.fingerprintSha256), removedCertificates: removed };
}

/** Which SAML configuration the update carries: under connectionConfiguration or directly (both shapes of the specification). */
function samlInput(input: UpdateSsoConnectionInput): SamlConfigurationInput | undefined {
  const nested = input.connectionConfiguration?.samlConfiguration ?? undefined;
  const direct = input.samlConfiguration ?? undefined;
  if (nested && direct) {
    throw badInput('give samlConfiguration once: under connectionConfiguration or directly under the input, not both', {
      field: 'samlConfiguration',
    });
  }
  const saml = nested ?? direct;
  const names = [saml?.signingCertName, saml?.certName, input.signingCertName, input.certName].filter((n) => n !== null && n !== undefined);
  if (new Set(names).size > 1) throw badInput('certName and signingCertName name the same thing; give one value', { field: 'certName' });
  if (!saml && names.length > 0) throw badInput('certName names a signingCert: give it with samlConfiguration.signingCert', { field: 'certName' });
  return saml;
}

function certNameOf(input: UpdateSsoConnectionInput, saml: SamlConfigurationInput): string | null {
  const name = saml.signingCertName ?? saml.certName ?? input.signingCertName ?? input.certName ?? null;
  return name === null ? null : checkConnectionName(name);
}

function checkEntityId(raw: string): string {
  const value = raw.trim();
  if (value === '' || value.length > 1024 || /[\s<>"]/.test(value))
    throw badInput("entityID must be the IdP's entity id (a URI, at most 1024 characters)", { field: 'entityID' });
  return value;
}

function checkTestersInDomains(testers: string[], domains: string[]): void {
  const outside = testers.filter((t) => !domains.includes(domainOf(t) ?? ''));
  if (outside.length > 0) {
    throw badInput(`testers must have an address in one of the connection's domains (${domains.join(', ')}); ${outside.join(', ')} has not`, {
      field: 'testers',
    });
  }
}

/** New domains' TXT values: the digests to store, and the values to answer once. */
function issueChallenges(domains: string[]): { claims: { domain: string; challengeHash: Uint8Array }[]; values: Record<string, string> } {
  const values: Record<string, string> = {};
  const claims = domains.map((domain) => {
    const value = newOpaqueToken();
    values[domain] = value;
    return { domain, challengeHash: digestOpaqueToken(value) };
  });
  return { claims, values };
}

const unclaimed = (domain: string) =>
  badInput(`the connection does not claim ${domain}: add it to the connection first (addDomains)`, { field: 'domain' });

/** How many look-ups the periodic check has in flight at once. */
const CHECKS_AT_ONCE = 8;

/** The audit actor of the periodic domain check. */
const SYSTEM_CHECK = 'sso-domain-check';

type DomainRef = { tenantId: string; connectionId: string; domain: string };

function toCertificate(cert: IdpCertificate, connectionId: string, now: Date, name: string | null, fromMetadata: boolean): SsoCertificate {
  return {
    id: randomUUID(),
    connectionId,
    name,
    pem: cert.pem,
    fingerprintSha256: cert.fingerprint256,
    issuer: cert.issuer,
    subject: cert.subject,
    notBefore: cert.notBefore,
    expiresAt: cert.expiresAt,
    fromMetadata,
    createdAt: now,
  };
}

function oldest(certificates: SsoCertificate[]): string {
  return certificates.reduce((a, b) => (b.expiresAt < a.expiresAt ? b : a)).expiresAt.toISOString();
}

const target = (id: string) => ({ kind: 'sso_connection', id });
const actorId = (p: Principal) => `${p.kind}:${p.id}`;
