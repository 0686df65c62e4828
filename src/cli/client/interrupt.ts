// Ctrl-C while a client command waits (at the username prompt, for the server, for approval):
// one signal that cancels whatever is under way, so that the command can say so and exit 130.
// On a terminal the prompt receives Ctrl-C as a key rather than the process as SIGINT; the
// prompt passes it on through interrupt().
export interface Interrupt {
  readonly signal: AbortSignal;
  /** cancels, as Ctrl-C does */
  interrupt(): void;
  /** stops listening: a Ctrl-C after this ends the process as usual */
  dispose(): void;
}

export function listenForInterrupt(): Interrupt {
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  // once: a second Ctrl-C, should the first be slow to take effect, ends the process
  process.once('SIGINT', interrupt);
  return { signal: controller.signal, interrupt, dispose: () => process.off('SIGINT', interrupt) };
}
