// The cost budgets of the GraphQL interfaces (OWASP Multi-Tenant cheat sheet: a noisy neighbour):
// each request's estimated cost (cost.ts) is drawn from two token buckets, its caller's (an API
// client or a user) and its account's: the tenant just below the vendor that the caller's home
// tenant is in (accountOf), shared by every client and user of that tenant and of the tenants
// below it, so that a tenant cannot multiply its budget by making clients, nor child tenants to
// hold them. A bucket holds a minute's budget and refills continuously; a request that either
// bucket cannot pay is refused whole (429 RATE_LIMITED with Retry-After) and draws from neither.
// Once it has run, what its answer held beyond the estimate is drawn too (settle), into debt if
// need be: an estimate's guess (a tenant's labels, say) cannot be turned into free work.
//
// The buckets live in the process's memory, as the per-address counts of oidc-provider and the
// in-memory limiters of Keycloak do: one read-modify-write of a map entry per request, no
// statement. With GATEHOUSE_WORKERS or several instances each process keeps its own buckets, so a
// budget is per process (docs/operations.md "Limits" says so). The map is bounded (least recently
// charged buckets are dropped: a dropped bucket is a full one, which only errs on the caller's side).
import { LRUCache } from 'lru-cache';

export interface BudgetSettings {
  /** cost a caller may spend per minute; 0: no caller budget */
  callerPerMinute: number;
  /** cost all callers of one home tenant may spend per minute together; 0: no tenant budget */
  tenantPerMinute: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export type Charge = { ok: true } | { ok: false; retryAfterSeconds: number; which: 'caller' | 'account'; perMinute: number };

/** The account of a tenant, by its path ('1.5.23.'): the tenant below the vendor it is in ('5'), or the vendor's own ('1'). */
export function accountOf(path: string): string {
  const [root, top] = path.split('.');
  return top || root || path;
}

export class CostBudget {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 100_000 });

  constructor(
    private readonly settings: BudgetSettings,
    private readonly now: () => number,
  ) {}

  /**
   * Draws `cost` from the caller's and the account's buckets, or from neither when one cannot pay
   * it. A cost above a whole bucket (a setting below MAX_COST) is drawn as a whole bucket: a full
   * one pays it, or it could never run.
   */
  charge(callerKey: string, account: string, cost: number): Charge {
    const at = this.now();
    const filled = this.wanted(callerKey, account).map((b) => ({
      ...b,
      bucket: this.refilled(b.key, b.perMinute, at),
      need: Math.min(cost, b.perMinute),
    }));
    const short = filled.find((b) => b.bucket.tokens < b.need);
    if (short) {
      const perMs = short.perMinute / 60_000;
      return {
        ok: false,
        which: short.which,
        perMinute: short.perMinute,
        retryAfterSeconds: Math.max(1, Math.ceil((short.need - short.bucket.tokens) / perMs / 1000)),
      };
    }
    for (const b of filled) this.buckets.set(b.key, { tokens: b.bucket.tokens - b.need, at });
    return { ok: true };
  }

  /** Draws `extra` more from both buckets (the answer held more than was estimated), into debt if
   *  need be: at most a minute's worth, so the wait it makes is at most two minutes. */
  settle(callerKey: string, account: string, extra: number): void {
    if (extra <= 0) return;
    const at = this.now();
    for (const b of this.wanted(callerKey, account)) {
      const bucket = this.refilled(b.key, b.perMinute, at);
      this.buckets.set(b.key, { tokens: Math.max(-b.perMinute, bucket.tokens - extra), at });
    }
  }

  private wanted(callerKey: string, account: string) {
    return [
      { which: 'caller' as const, key: `caller:${callerKey}`, perMinute: this.settings.callerPerMinute },
      { which: 'account' as const, key: `account:${account}`, perMinute: this.settings.tenantPerMinute },
    ].filter((b) => b.perMinute > 0);
  }

  /** The bucket as it is now: what it held plus what a minute's rate has added since, up to a minute's worth. */
  private refilled(key: string, perMinute: number, at: number): Bucket {
    const bucket = this.buckets.get(key);
    if (!bucket) return { tokens: perMinute, at };
    const elapsed = Math.max(0, at - bucket.at);
    return { tokens: Math.min(perMinute, bucket.tokens + (elapsed * perMinute) / 60_000), at };
  }
}
