// gatehouse users create|list|disable|enable|reset: user management for operators, straight on
// the database (no token needed: whoever runs it holds the database). Changes are audited as
// actor `system:cli`.
import { parseArgs } from 'node:util';
import { ROLE_IDS, roleName, type RoleName } from '../../access/roles.js';
import { systemClock } from '../../clock.js';
import type { Config, Variable } from '../../config.js';
import { AppError } from '../../errors.js';
import { createStore } from '../../store/index.js';
import { migrateToLatest } from '../../store/migrate.js';
import { setupPending, type User } from '../../users/model.js';
import { UserService } from '../../users/service.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb } from './open-db.js';

export const USERS_USAGE = `Usage:
  gatehouse users create --email ADDRESS [--tenant ID] [--role ROLE]...
                         [--display-name NAME]
  gatehouse users list [--tenant ID] [--json]
  gatehouse users disable --email ADDRESS
  gatehouse users enable --email ADDRESS
  gatehouse users reset --email ADDRESS

Manages the people who sign in, directly on the configured database
(DATABASE_URL, else the embedded folder GATEHOUSE_DATA_DIR; on the embedded
database stop serve first: the folder has one owner at a time). Day to day, use
the GraphQL operations of docs/users.md instead. Changes are audited as
system:cli.

  create   creates a user in tenant --tenant (default 1, the vendor) with the
           roles given (Administrator, Analyst, Responder, Auditor; Operations
           and Support in tenant 1 only; names or role ids; default Analyst)
           and prints a one-time set-up link: the person opens it to set a
           password and enrol an authenticator (TOTP)
  list     lists the users of a tenant with status and roles (--json: one
           object per line)
  disable  stops a user: sessions and tokens stop working at once, and stay
           dead if the user is enabled again
  enable   lets a disabled user sign in again
  reset    clears a user's password, authenticator and recovery codes, ends
           its tokens, and prints a new set-up link (a lost authenticator, or
           an administrator locked out)
`;

/** The settings `users` reads (its --help lists them). */
export const USERS_SETTINGS: readonly Variable[] = ['DATABASE_URL', 'GATEHOUSE_DATA_DIR', 'GATEHOUSE_BASE_URL', 'GATEHOUSE_USER_SETUP_TTL'];

const ROLE_BY_NAME = new Map(Object.entries(ROLE_IDS).map(([name, id]) => [name.toLowerCase(), id]));

function roleIdOf(value: string): string {
  const id = ROLE_BY_NAME.get(value.toLowerCase()) ?? value.toLowerCase();
  if (!roleName(id)) throw new UsageError(`unknown role ${JSON.stringify(value)}: use one of ${Object.keys(ROLE_IDS).join(', ')}`);
  return id;
}

const ROLE_ORDER: string[] = Object.values(ROLE_IDS);

/** Assignments by tenant, then in the order of the role table. */
function ordered(user: User): User['roleAssignments'] {
  return [...user.roleAssignments].sort(
    (a, b) => Number(a.tenantId) - Number(b.tenantId) || ROLE_ORDER.indexOf(a.roleId) - ROLE_ORDER.indexOf(b.roleId),
  );
}

function describe(user: User): string {
  const roles = ordered(user)
    .map((a) => `${roleName(a.roleId) ?? a.roleId}@${a.tenantId}${a.expiresAt ? ` until ${a.expiresAt.toISOString()}` : ''}`)
    .join(', ');
  const setup = setupPending(user) ? ' (set-up pending)' : '';
  return `${user.email}\t${user.status}${setup}\ttenant ${user.tenantId}\t${roles || 'no roles'}\t${user.id}`;
}

export async function usersCommand(config: Config, args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const values = parseOptions(rest);
  const needEmail = (): string => {
    if (!values.email) throw new UsageError(`users ${action} needs --email ADDRESS`);
    return values.email;
  };
  if (!action || !['create', 'list', 'disable', 'enable', 'reset'].includes(action)) {
    throw new UsageError(action ? `unknown users action ${action}` : 'users needs an action: create, list, disable, enable or reset');
  }
  const roles = (values.role ?? []).map(roleIdOf);

  const db = await openConfiguredDb(config);
  try {
    await migrateToLatest(db.kysely);
    const store = createStore(db.kysely, systemClock);
    if (!(await store.tenants.rootExists())) {
      throw new UsageError('this database is empty: start `gatehouse serve` once first (it creates the vendor tenant 1 and the first administrator)');
    }
    const users = new UserService(store, systemClock, {
      baseUrl: config.baseUrl,
      setupTtlSeconds: config.userSetupTtlSeconds,
    });
    const out = (line: string) => process.stdout.write(`${line}\n`);
    switch (action) {
      case 'create': {
        const created = await users.createAsOperator(values.tenant ?? '1', {
          email: needEmail(),
          displayName: values['display-name'] ?? null,
          roles: roles.length ? roles : null,
        });
        out(`created ${describe(created.user)}`);
        out(`set-up link (one use, until ${created.setupExpiresAt.toISOString()}; send it to the person, privately):`);
        out(`  ${created.setupUrl}`);
        return 0;
      }
      case 'list': {
        for (const u of await users.listAsOperator(values.tenant ?? '1')) {
          out(values.json ? JSON.stringify(toJson(u)) : describe(u));
        }
        return 0;
      }
      case 'disable':
      case 'enable': {
        const user = await users.setDisabledAsOperator(needEmail(), action === 'disable');
        out(`${action}d ${describe(user)}`);
        return 0;
      }
      default: {
        const reset = await users.resetSignInAsOperator(needEmail());
        out(`reset ${describe(reset.user)}`);
        out(`set-up link (one use, until ${reset.setupExpiresAt.toISOString()}):`);
        out(`  ${reset.setupUrl}`);
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}

function parseOptions(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        email: { type: 'string' },
        tenant: { type: 'string' },
        role: { type: 'string', multiple: true },
        'display-name': { type: 'string' },
        json: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    // node:util names the option: "Unknown option '--mail'", "Option '--email <value>' argument missing"
    throw new UsageError((err as Error).message.replace(/\. To specify.*$/s, ''));
  }
}

function toJson(u: User): Record<string, unknown> {
  return {
    id: u.id,
    email: u.email,
    display_name: u.displayName,
    status: u.status,
    tenant_id: u.tenantId,
    setup_pending: setupPending(u),
    roles: ordered(u).map((a) => ({
      tenant_id: a.tenantId,
      role: (roleName(a.roleId) ?? a.roleId) as RoleName | string,
      expires_at: a.expiresAt?.toISOString() ?? null,
    })),
  };
}
