// The command line of the client commands (login, token, whoami, logout): node's parseArgs, with
// every mistake turned into a UsageError (exit 2, pointing to the command's --help).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../usage-error.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseOptions<O extends Options>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify.*$/s, '').replace(/\.$/, ''));
  }
}

/** Where the client commands read their settings from, besides flags. */
export const CLIENT_ENVIRONMENT = {
  url: 'GATEHOUSE_URL',
  username: 'GATEHOUSE_USERNAME',
  clientId: 'GATEHOUSE_CLIENT_ID',
  clientSecret: 'GATEHOUSE_CLIENT_SECRET',
  configDir: 'GATEHOUSE_CONFIG_DIR',
} as const;

export const CONFIG_DIR_HELP = `  GATEHOUSE_CONFIG_DIR  the folder that keeps the token (default: the user's
                        configuration folder, ~/.config/gatehouse on Linux)`;
