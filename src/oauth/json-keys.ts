// The keys of a JSON text's top-level object, in order and decoded, repeats included. JSON.parse
// keeps only the last of repeated keys, and a key can be written in many ways ("client_id",
// "\u0063lient_id"), so repeats can only be found by reading the keys as JSON defines them.
// Called only on text that JSON.parse accepted, so the scanner can rely on it being well formed.

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

/** Index just past the string that starts at `start` (an opening quote). */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i + 1;
}

/** Index just past the value that starts at `start`: a string, an object, an array or a literal. */
function valueEnd(text: string, start: number): number {
  if (text[start] === '"') return stringEnd(text, start);
  let depth = 0;
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = stringEnd(text, i);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && (c === ',' || WHITESPACE.has(c))) return i;
    i++;
  }
  return i;
}

export function topLevelKeys(text: string): string[] {
  const keys: string[] = [];
  let i = 0;
  const skipSpace = () => {
    while (WHITESPACE.has(text[i]!)) i++;
  };
  skipSpace();
  if (text[i] !== '{') return keys;
  i++;
  skipSpace();
  while (text[i] === '"') {
    const end = stringEnd(text, i);
    keys.push(JSON.parse(text.slice(i, end)) as string);
    i = end;
    skipSpace();
    i++; // the colon
    skipSpace();
    i = valueEnd(text, i);
    skipSpace();
    if (text[i] === ',') i++;
    skipSpace();
  }
  return keys;
}
