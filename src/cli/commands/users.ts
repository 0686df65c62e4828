// gatehouse users create|list|disable|enable|reset|unlock: user management for operators, straight on
// the database (no token needed: whoever runs it holds the database). Changes are audited as
// actor: the operator (the OS user, cli/operator.ts).
import { SealedBox, resolveEncryptionKeys } from '../../crypto/sealed-box.js';
import { MailService } from '../../mail/service.js';
import { folderTransport } from '../../mail/transports.js';
import { mailFrom } from '../../mail/from-address.js';
import { parseArgs } from 'node:util';
import { ROLE_IDS, ROOT_TENANT_ID, roleName, TENANT_ROLES, VENDOR_ROLES, type RoleName } from '../../access/roles.js';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { createStore } from '../../store/index.js';
import { setupPending, type User } from '../../users/model.js';
import { UserService } from '../../users/service.js';
import { StartFailure } from '../failure-line.js';
import { currentOperator } from '../operator.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb, requireCurrentSchema } from './open-db.js';

const ROLE_BY_NAME = new Map(Object.entries(ROLE_IDS).map(([name, id]) => [name.toLowerCase(), id]));

function roleIdOf(value: string): string {
  const id = ROLE_BY_NAME.get(value.toLowerCase()) ?? value.toLowerCase();
  if (!roleName(id)) throw new UsageError(`unknown role ${JSON.stringify(value)}: use one of ${Object.keys(ROLE_IDS).join(', ')}`);
  return id;
}

const names = (ids: readonly string[]) => ids.map((id) => roleName(id) ?? id).join(', ');

/** Operations and Support exist only in the vendor tenant: said with the roles' names, before
 *  anything is opened. */
function checkRolesFor(tenantId: string, roleIds: readonly string[]): void {
  if (tenantId === ROOT_TENANT_ID) return;
  const vendorOnly = roleIds.find((id) => (VENDOR_ROLES as readonly string[]).includes(id));
  if (vendorOnly) {
    throw new UsageError(
      `role ${roleName(vendorOnly)} exists only in the vendor tenant ${ROOT_TENANT_ID}: give --tenant ${ROOT_TENANT_ID}, ` +
        `or for tenant ${tenantId} one of ${names(TENANT_ROLES)}`,
    );
  }
}

const ROLE_ID_PATTERN = new RegExp(Object.values(ROLE_IDS).join('|'), 'gi');

/** A message of the user service, with every role id in it replaced by the role's name. */
function withRoleNames(message: string): string {
  return message.replace(ROLE_ID_PATTERN, (id) => roleName(id.toLowerCase()) ?? id);
}

/** What to use instead while a server holds the embedded folder: its API does the same. */
const THROUGH_THE_API: Record<string, string> = {
  create: "the createUser mutation (its set-up link is then made with the server's own settings)",
  list: 'the users query',
  disable: 'the disableUser mutation',
  enable: 'the enableUser mutation',
  reset: 'the resetUserSignIn mutation',
  unlock: 'the unlockUserSignIn mutation',
};

/** The refusal when a running server holds the embedded folder: what to do instead. */
function folderInUse(err: DataDirLockedError, dataDir: string, action: string): StartFailure {
  if (!err.holder) return new StartFailure(err.message, { cause: err });
  return new StartFailure(
    `the embedded database folder ${dataDir} is in use by ${err.holder} (a running gatehouse serve); ` +
      `users works on the database itself, one process at a time: stop the server and run this again, ` +
      `or do the same through the running server: ${THROUGH_THE_API[action]} on /graphql, with a token of an Administrator ` +
      '(gatehouse login, then gatehouse token; docs/users.md)',
    { cause: err },
  );
}

/** A word as a POSIX shell reads it: as it is when it is plain, else in single quotes. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The lifetime in words: "3 days", "300 s". */
function lifetime(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} hour${seconds === 3_600 ? '' : 's'}`;
  return `${seconds} s`;
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

const ACTIONS = ['create', 'list', 'disable', 'enable', 'reset', 'unlock'] as const;
type UsersAction = (typeof ACTIONS)[number];

/** A `users` command line, read and checked before anything is opened. */
export type UsersCommandLine = {
  /** --tenant, else the vendor tenant 1 */
  tenant: string;
  /** the role ids of the --role options, in their order */
  roles: string[];
  displayName: string | null;
  json: boolean;
} & ({ action: 'list' } | { action: Exclude<UsersAction, 'list'>; email: string });

/**
 * Reads a `users` command line (the words after `users`). Every mistake it can hold is a
 * UsageError, said before the database is opened: an unknown option or action, a missing
 * --email, an unknown role, or a role the tenant cannot hold.
 */
export function usersCommandLine(args: string[]): UsersCommandLine {
  const [action, ...rest] = args;
  const values = parseOptions(rest);
  if (!action || !(ACTIONS as readonly string[]).includes(action)) {
    throw new UsageError(action ? `unknown users action ${action}` : 'users needs an action: create, list, disable, enable, reset or unlock');
  }
  const tenant = values.tenant ?? ROOT_TENANT_ID;
  const roles = (values.role ?? []).map(roleIdOf);
  if (action === 'create') checkRolesFor(tenant, roles);
  const common = { tenant, roles, displayName: values['display-name'] ?? null, json: values.json === true };
  if (action === 'list') return { ...common, action };
  if (!values.email) throw new UsageError(`users ${action} needs --email ADDRESS`);
  return { ...common, action: action as Exclude<UsersAction, 'list'>, email: values.email };
}

export async function usersCommand(config: Config, args: string[]): Promise<number> {
  const line = usersCommandLine(args);
  let db: Awaited<ReturnType<typeof openConfiguredDb>>;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) throw folderInUse(err, config.dataDir, line.action);
    throw err;
  }
  try {
    await requireCurrentSchema(
      db,
      'this database is empty: start `gatehouse serve` once first (it creates the vendor tenant 1 and the first administrator)',
    );
    const store = createStore(db.kysely, systemClock);
    if (!(await store.tenants.rootExists())) {
      throw new UsageError('this database is empty: start `gatehouse serve` once first (it creates the vendor tenant 1 and the first administrator)');
    }
    // the operator's links are printed, never mailed (users/service.ts); a reset's notice is queued
    // in the outbox table, and the server delivers it
    const box = new SealedBox(resolveEncryptionKeys(config.encryptionKeys, config.dataDir, db.engine));
    const mail = new MailService(
      store,
      box,
      systemClock,
      folderTransport(config.dataDir, box),
      { from: mailFrom(config), replyTo: config.mailReplyTo, product: config.vendorName },
      false,
    );
    const users = new UserService(store, systemClock, { baseUrl: config.baseUrl, setupTtlSeconds: config.userSetupTtlSeconds }, mail);
    const out = (text: string) => process.stdout.write(`${text}\n`);
    /** the link, then which settings made it: they are this command's, not necessarily the server's */
    const link = (url: string, until: Date, email: string, advice = '') => {
      out(`set-up link (one use, valid ${lifetime(config.userSetupTtlSeconds)}, until ${until.toISOString()}${advice}):`);
      out(`  ${url}`);
      out(`made with this command's settings, which may not be the running server's:`);
      out(`  base URL  ${config.baseUrl}  (GATEHOUSE_BASE_URL, else http://HOST:PORT)`);
      out(`  lifetime  ${lifetime(config.userSetupTtlSeconds)}  (GATEHOUSE_USER_SETUP_TTL, in seconds)`);
      out(`if the server's differ, make a new link with them:`);
      out(`  gatehouse users reset --email ${shellWord(email)} --base-url URL --user-setup-ttl SECONDS`);
    };
    switch (line.action) {
      case 'create': {
        const created = await users.createAsOperator(currentOperator(), line.tenant, {
          email: line.email,
          displayName: line.displayName,
          roles: line.roles.length ? line.roles : null,
        });
        out(`created ${describe(created.user)}`);
        link(created.setupUrl!, created.setupExpiresAt, created.user.email, '; send it to the person, privately');
        return 0;
      }
      case 'list': {
        for (const u of await users.listAsOperator(line.tenant)) {
          out(line.json ? JSON.stringify(toJson(u)) : describe(u));
        }
        return 0;
      }
      case 'disable':
      case 'enable': {
        const user = await users.setDisabledAsOperator(currentOperator(), line.email, line.action === 'disable');
        out(`${line.action}d ${describe(user)}`);
        return 0;
      }
      case 'reset': {
        const reset = await users.resetSignInAsOperator(currentOperator(), line.email);
        out(`reset ${describe(reset.user)}`);
        link(reset.setupUrl!, reset.setupExpiresAt, reset.user.email, '; send it to the person, privately');
        return 0;
      }
      case 'unlock': {
        const user = await users.unlockSignInAsOperator(currentOperator(), line.email);
        out(`unlocked ${describe(user)}`);
        return 0;
      }
    }
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(withRoleNames(err.message));
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
