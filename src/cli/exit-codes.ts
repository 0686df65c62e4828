// Exit codes the commands share beyond 0 (done), 1 (failed) and 2 (a command line they cannot act on).

/** Stopped or cancelled by Ctrl-C (SIGINT): 128 + 2, as a shell reports an interrupted command. */
export const EXIT_INTERRUPTED = 130;

/**
 * Ends a server process once its stop is done, with its exit status, rather than letting it end by
 * itself. A process that ends by itself first takes every handle down, its signal handlers
 * included, and then goes on ending for tens of milliseconds (PGlite's memory, the threads: some
 * 100 ms under Node 26, measured with strace); a late copy of the stop signal in that time (npm's,
 * on a busy machine) meets the default action and kills the process, its exit status and the
 * log's last lines lost. process.exit() leaves the handlers in place to the end, and what was
 * written to standard output and error on Linux has been written (pino's buffer is flushed on exit).
 */
export function exitAfterStop(code: number): never {
  process.exit(code);
}
