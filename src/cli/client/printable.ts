// What a server sent, made safe to print on a terminal: a hostile or broken server could put escape
// sequences (colours, cursor moves, a rewritten title, a hidden line) into a user code, an address
// or an error description. Every server-supplied string the client commands print passes here.

// C0 controls (newline and tab included: each message is one line), DEL, C1 controls, and the
// bidirectional formatting characters that make text read differently from how it is stored
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function printable(text: string): string {
  return text.replace(UNPRINTABLE, '');
}
