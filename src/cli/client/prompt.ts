// Asking the person at the terminal: one line from standard input (a pipe works too).
import { createInterface } from 'node:readline/promises';
import type { Interrupt } from './interrupt.js';

/** The answer, trimmed; undefined when input ended without one. Ctrl-C (the SIGINT the process
 *  receives, or on a terminal the key readline reads) cancels: it rejects with the abort reason. */
export async function ask(question: string, interrupt: Interrupt): Promise<string | undefined> {
  const terminal = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal });
  rl.on('SIGINT', () => interrupt.interrupt());
  const closed = new Promise<undefined>((resolve) => rl.once('close', () => resolve(undefined)));
  const answered = rl.question(question, { signal: interrupt.signal });
  // whichever of the two loses the race may still settle; that is not a failure
  answered.catch(() => undefined);
  try {
    const answer = await Promise.race([answered, closed]);
    if (!interrupt.signal.aborted) return answer?.trim() || undefined;
  } catch (err) {
    if (!interrupt.signal.aborted) throw err;
  } finally {
    rl.close();
  }
  // end the prompt's line, so that what is said next starts on its own (a terminal's readline has)
  if (!terminal) process.stderr.write('\n');
  throw interrupt.signal.reason;
}
