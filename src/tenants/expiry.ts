// Automatic disabling of expired tenants: a tenant whose expires_at lies more than
// GATEHOUSE_EXPIRY_GRACE_DAYS in the past gets every environment disabled, its updated_at set,
// and an audit event. Idempotent (a disabled tenant is not picked again) and safe with several
// processes: each batch locks its rows and skips rows another process holds.
import type { Clock } from '../clock.js';
import type { Transactional } from '../transaction.js';
import type { TenantStores } from './service.js';
import { DAY_MS } from './model.js';

const BATCH = 200;

export async function disableExpiredTenants(store: Transactional<TenantStores>, clock: Clock, graceDays: number): Promise<string[]> {
  const disabled: string[] = [];
  for (;;) {
    const now = clock.now();
    const cutoff = new Date(now.getTime() - graceDays * DAY_MS);
    const batch = await store.transaction(async (tx) => {
      const expired = await tx.tenants.lockExpired(cutoff, BATCH);
      for (const t of expired) {
        const envs = await tx.tenants.environments([t.id]);
        await tx.tenants.setEnvironments(t.id, new Map(envs.map((e) => [e.name, false])), now);
        await tx.tenants.updateTenant(t.id, { enabled: false, tokensValidAfter: now, updatedAt: now });
        await tx.audit.insertEvent({
          occurredAt: now,
          tenantId: t.id,
          actor: { kind: 'system', id: 'expiry' },
          action: 'tenant.disabled_expired',
          target: { kind: 'tenant', id: t.id },
          details: { expires_at: t.expiresAt?.toISOString() ?? null, grace_days: graceDays },
        });
      }
      return expired.map((t) => t.id);
    });
    disabled.push(...batch);
    if (batch.length < BATCH) return disabled;
  }
}
