// Reading the audit trail: the acting tenant's events and those of the tenants below it, for
// its (or a partner's) Administrators; never another tenant's. Newest first, by cursor. And the
// one event no use case writes itself: a change refused because the caller's roles do not allow it.
import { assertCan, rolesIn, supportOnly } from '../access/policy.js';
import { ROLE_IDS } from '../access/roles.js';
import type { Caller } from '../access/principal.js';
import type { Clock } from '../clock.js';
import { badInput } from '../errors.js';
import { TENANT_ID_PATTERN } from '../ids.js';
import { checkPage } from '../paging.js';
import { auditCursor, checkOutcome, parseAuditCursor, principalEvent, type StoredAuditEvent } from './model.js';
import type { AuditStore } from './store.js';

/** One change refused for the caller's roles: the operation, the words the caller got, and the
 *  tenant whose roles were judged if the refusal says (else the acting tenant). */
export interface Refusal {
  operation: string;
  reason: string;
  tenantId?: string | undefined;
}

/** Where a refused change came in, as `details.via` names it. */
export type RefusalChannel = 'tenant-graphql' | 'credential-graphql' | 'console';

/** an authorization.refused event names at most this many operations */
const MAX_REFUSED_OPERATIONS = 20;
/** one request writes refusal events in at most this many tenants */
const MAX_REFUSAL_TENANTS = 5;

export interface AuditStores {
  audit: AuditStore;
}

export interface AuditEventsInput {
  filter?: {
    from?: Date | null;
    to?: Date | null;
    actor?: string | null;
    action?: string | null;
    outcome?: string | null;
    tenantID?: string | null;
  } | null;
  after?: string | null;
  first?: number | null;
}

export interface AuditEventPage {
  events: StoredAuditEvent[];
  /** the position of the last event: `after` for the next page (null on an empty page) */
  cursor: string | null;
  hasMore: boolean;
}

export class AuditService {
  constructor(
    private readonly store: AuditStores,
    private readonly clock: Clock,
  ) {}

  async list(caller: Caller, input: AuditEventsInput): Promise<AuditEventPage> {
    assertCan(caller.principal, caller.tenant, 'audit.read', this.clock.now());
    const f = input.filter ?? {};
    const { perPage } = checkPage({ perPage: input.first }, { names: { page: 'after', perPage: 'first' }, defaultPerPage: 50 });
    if (f.from && f.to && f.from > f.to) throw badInput('filter.from is after filter.to: give a start before the end', { field: 'filter.from' });
    for (const [name, value] of [
      ['filter.actor', f.actor],
      ['filter.action', f.action],
    ] as const) {
      if (value !== null && value !== undefined && (value.length < 1 || value.length > 200)) {
        throw badInput(`${name} must be 1-200 characters`, { field: name });
      }
    }
    if (f.tenantID !== null && f.tenantID !== undefined && !TENANT_ID_PATTERN.test(f.tenantID)) {
      throw badInput('filter.tenantID must be a tenant id (a decimal number such as 1042)', { field: 'filter.tenantID' });
    }
    const after = input.after ? parseAuditCursor(input.after, 'after') : null;
    const rows = await this.store.audit.listEvents(
      { subtreeOf: caller.tenant.id, tenantId: f.tenantID ?? null },
      { from: f.from, to: f.to, actorId: f.actor, action: f.action, outcome: checkOutcome(f.outcome, 'filter.outcome') },
      after,
      perPage + 1,
    );
    const events = rows.slice(0, perPage);
    const last = events.at(-1);
    return { events, cursor: last ? auditCursor(last) : (input.after ?? null), hasMore: rows.length > perPage };
  }

  /**
   * Changes the caller's roles do not allow, refused (FORBIDDEN) in one request: an event
   * `authorization.refused` (outcome refused) in the trail of the tenant whose roles were judged
   * (the acting tenant unless the refusal names another), so that its Administrators see who tried
   * what and from where. Nothing changed, so it is written on its own. Bounded: one event per
   * tenant and request (at most MAX_REFUSAL_TENANTS), each naming at most MAX_REFUSED_OPERATIONS
   * operations; its target is the first one.
   */
  async refused(caller: Caller, refusals: Refusal[], via: RefusalChannel): Promise<void> {
    const now = this.clock.now();
    const byTenant = new Map<string, Refusal[]>();
    for (const r of refusals) {
      const tenantId = r.tenantId ?? caller.tenant.id;
      byTenant.set(tenantId, [...(byTenant.get(tenantId) ?? []), r]);
    }
    for (const [tenantId, here] of [...byTenant].slice(0, MAX_REFUSAL_TENANTS)) {
      const operations = [...new Set(here.map((r) => r.operation))];
      await this.store.audit.insertEvent(
        principalEvent(
          caller.principal,
          now,
          tenantId,
          'authorization.refused',
          { kind: 'operation', id: operations[0]! },
          { via, operations: operations.slice(0, MAX_REFUSED_OPERATIONS), reason: here[0]!.reason },
          'refused',
        ),
      );
    }
  }

  /**
   * A request of vendor staff acting through Support access (the tenant allows support access,
   * and Support is the only role that reaches it; or the caller holds nothing but Support): one
   * `support.accessed` event in the trail of the tenant it acts in, naming what it asked for, so
   * that a customer's Administrators see every staff visit (docs/operations.md "Audit trail").
   * Any other caller writes nothing.
   */
  async staffAccess(caller: Caller, operations: readonly string[], via: RefusalChannel): Promise<void> {
    const now = this.clock.now();
    const roles = rolesIn(caller.principal, caller.tenant, now);
    const throughSupport = roles.size === 1 && roles.has(ROLE_IDS.Support);
    if (!throughSupport && !supportOnly(caller.principal, now)) return;
    await this.store.audit.insertEvent(
      principalEvent(
        caller.principal,
        now,
        caller.tenant.id,
        'support.accessed',
        { kind: 'tenant', id: caller.tenant.id },
        { via, operations: [...new Set(operations)].slice(0, MAX_REFUSED_OPERATIONS) },
      ),
    );
  }
}
