// The one line an operator reads when a command fails. Failures the operator can act on carry
// their own words (a locked folder, an unreachable database, a port in use); anything else is
// shown by its message, on one line.
export class StartFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartFailure';
  }
}

export function failureLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s*\n\s*/g, ' ').trim() || 'failed';
}

/** A listen error (`variable` names the port setting), in words. */
export function listenFailure(err: unknown, host: string, port: number, variable: string): StartFailure {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const reason =
    code === 'EADDRINUSE'
      ? `the address is already in use; stop the other process or set ${variable} to a free port`
      : code === 'EACCES'
        ? `permission denied (ports below 1024 need privileges); set ${variable} to 1024 or above`
        : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? `${host} is not an address of this machine; set HOST (0.0.0.0 listens on all)`
          : failureLine(err);
  return new StartFailure(`cannot listen on ${where} (${variable}): ${reason}`, { cause: err });
}
