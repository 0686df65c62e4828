// A command line the command cannot act on (a missing or unknown option): answered with the
// problem, a pointer to the command's --help, and exit code 2.
export class UsageError extends Error {
  override name = 'UsageError';
}
