// Database errors the store turns into something a use case can act on.
export class UniqueViolation extends Error {
  constructor(
    readonly constraint: string | undefined,
    cause: unknown,
  ) {
    super(`unique violation${constraint ? ` on ${constraint}` : ''}`, { cause });
    this.name = 'UniqueViolation';
  }
}

/** Rethrows a unique-constraint violation (SQLSTATE 23505) as UniqueViolation. */
export function rethrowUnique(err: unknown): never {
  const e = err as { code?: string; constraint?: string; message?: string };
  if (e?.code === '23505') {
    const constraint = e.constraint ?? /constraint "([^"]+)"/.exec(e.message ?? '')?.[1];
    throw new UniqueViolation(constraint, err);
  }
  throw err;
}
