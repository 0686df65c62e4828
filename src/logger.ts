// pino, configured so that nothing secret reaches the logs: requests are logged by method and
// path only (no query string, no headers, no body), and credential-bearing keys are redacted
// wherever they appear.
import pino, { type DestinationStream, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'password',
  '*.password',
  'access_token',
  '*.access_token',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method?: string; url?: string; ip?: string; id?: string }) => ({
          method: req.method,
          path: typeof req.url === 'string' ? req.url.split('?')[0] : undefined,
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}
