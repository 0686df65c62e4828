// The ordered list of migrations. Names sort by time; the Migrator applies the missing ones.
import type { Migration } from 'kysely';
import { foundation } from './20261122T0900-foundation.js';
import { tenantInterface } from './20261122T1400-tenant-interface.js';
import { tenantClosure } from './20261122T1900-tenant-closure.js';

export const migrations: Record<string, Migration> = {
  '20261122T0900-foundation': foundation,
  '20261122T1400-tenant-interface': tenantInterface,
  '20261122T1900-tenant-closure': tenantClosure,
};
