// Exit codes the commands share beyond 0 (done), 1 (failed) and 2 (a command line they cannot act on).

/** Stopped or cancelled by Ctrl-C (SIGINT): 128 + 2, as a shell reports an interrupted command. */
export const EXIT_INTERRUPTED = 130;
