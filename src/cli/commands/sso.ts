// gatehouse sso disable --connection ID | sso release-domain DOMAIN: what an operator does to an
// SSO connection without an Administrator's token, straight on the database (like `gatehouse
// users`), through the SSO service's own rules. Each change is an audit event of the
// connection's tenant with the operator (the OS user, cli/operator.ts) as actor.
import { parseArgs } from 'node:util';
import { systemClock } from '../../clock.js';
import type { Config } from '../../config.js';
import { AppError } from '../../errors.js';
import { SsoService } from '../../sso/service.js';
import { DataDirLockedError } from '../../store/data-dir-lock.js';
import { createStore } from '../../store/index.js';
import type { OperatorActor } from '../../audit/model.js';
import { StartFailure } from '../failure-line.js';
import { currentOperator } from '../operator.js';
import { UsageError } from '../usage-error.js';
import { openConfiguredDb, requireCurrentSchema } from './open-db.js';

export type SsoCommandLine = { action: 'disable'; connection: string } | { action: 'release-domain'; domain: string };

export function ssoCommandLine(args: string[]): SsoCommandLine {
  let values: { connection?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({ args, allowPositionals: true, strict: true, options: { connection: { type: 'string' } } }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; see gatehouse sso --help`);
  }
  const [action, ...rest] = positionals;
  if (action === 'disable') {
    if (rest.length > 0) throw new UsageError(`unexpected ${JSON.stringify(rest[0])}: write gatehouse sso disable --connection ID`);
    if (!values.connection) throw new UsageError('--connection is required: the id (a UUID) of the connection to disable');
    return { action, connection: values.connection };
  }
  if (action === 'release-domain') {
    if (values.connection !== undefined)
      throw new UsageError('release-domain takes a domain, not --connection: write gatehouse sso release-domain DOMAIN');
    if (rest.length !== 1) throw new UsageError('release-domain takes one domain: write gatehouse sso release-domain example.com');
    return { action, domain: rest[0]! };
  }
  throw new UsageError(
    `${action === undefined ? 'no action given' : `unknown action ${JSON.stringify(action)}`}: use disable or release-domain (gatehouse sso --help)`,
  );
}

/** Runs a parsed command on a service; the line to print. */
export async function runSsoCommand(sso: SsoService, line: SsoCommandLine, operator: OperatorActor): Promise<string> {
  if (line.action === 'disable') {
    const { connection, changed } = await sso.disableAsOperator(operator, line.connection);
    return changed
      ? `disabled SSO connection ${connection.id} (${connection.name}) of tenant ${connection.tenantId}: nobody signs in through it now`
      : `SSO connection ${connection.id} (${connection.name}) of tenant ${connection.tenantId} was disabled already: nothing changed`;
  }
  const { connection, domain } = await sso.releaseDomainAsOperator(operator, line.domain);
  return `released ${domain} from SSO connection ${connection.id} (${connection.name}) of tenant ${connection.tenantId}; it serves ${connection.domains.join(', ')}`;
}

export async function ssoCommand(config: Config, args: string[]): Promise<number> {
  const line = ssoCommandLine(args);
  let db: Awaited<ReturnType<typeof openConfiguredDb>>;
  try {
    db = await openConfiguredDb(config);
  } catch (err) {
    if (err instanceof DataDirLockedError) {
      throw new StartFailure(
        `the embedded database folder ${config.dataDir} is in use${err.holder ? ` by ${err.holder}` : ''}: stop the server and run this again, or do it through the running server (updateSSOConnection on /public/query with an Administrator's token)`,
        { cause: err },
      );
    }
    throw err;
  }
  try {
    await requireCurrentSchema(db, 'this database is empty: start `gatehouse serve` once first');
    const store = createStore(db.kysely, systemClock);
    const sso = new SsoService(store, systemClock, {
      baseUrl: config.baseUrl,
      environment: config.region,
      metadataRefreshHours: config.ssoMetadataRefreshHours,
      allowPrivateUrls: config.ssoAllowPrivateUrls,
    });
    process.stdout.write(`${await runSsoCommand(sso, line, currentOperator())}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) throw new UsageError(err.message);
    throw err;
  } finally {
    await db.close();
  }
}
