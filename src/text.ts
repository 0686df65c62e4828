// The text rules for everything a caller writes or filters with, in one place, so that a name
// is stored, compared and searched under the same rules (docs/text-rules.md):
// - well-formed Unicode (no lone surrogates: PostgreSQL cannot store them) in NFC;
// - names and one-line values: no control characters (C0, C1, DEL), no format characters
//   (Unicode category Cf: zero-width characters, bidirectional controls, soft hyphen …), no
//   default-ignorable code points (variation selectors, Hangul fillers, combining grapheme joiner
//   …) and no braille blank: characters that show nothing, so that two names could look alike or a
//   name display as something else;
// - free text (descriptions, reasons) may hold line breaks and tabs, the joiners some scripts and
//   emoji need, and default-ignorables, but never bidirectional controls or other format characters;
// - names: trimmed, every run of whitespace (tabs and line breaks too) one space, and compared
//   through a key (NFKC, case-folded) so that `CI`, `ci`, `ｃｉ`, and `STRASSE` and `straße`, are
//   one name;
// - a length bound for every field, counted in characters (code points).
import { badInput } from './errors.js';

/** Longest accepted value of each kind of text, in characters (docs/text-rules.md lists them; the SDL descriptions state them). */
export const TEXT_LIMITS = {
  /** tenant, client, service and subscription names */
  name: 200,
  labelName: 100,
  labelValue: 1000,
  description: 2000,
  /** a DNS name (RFC 1035) */
  domain: 253,
  /** an e-mail address (RFC 5321 path limit) */
  email: 254,
  url: 2048,
  /** why support access was granted */
  reason: 500,
  /** name filters of the search queries */
  search: 200,
  /** an opaque identifier a caller echoes back (cursorPos) */
  cursor: 2048,
} as const;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is being found
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same, less the line breaks and tab free text keeps
const CONTROL_IN_FREE_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
/** shows nothing: format characters, default-ignorable code points, the braille blank */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]/u;
/** format characters other than the joiners (ZWNJ, ZWJ), which Persian, Indic scripts and emoji need */
const FORMAT_BUT_JOINERS = /(?![\u200c\u200d])\p{Cf}/u;
/** line and paragraph separators: invisible line breaks */
const SEPARATORS = /[\u2028\u2029]/u;
/** in a `u` regex a surrogate pair is one code point, so this finds only unpaired halves */
const LONE_SURROGATE = /[\ud800-\udfff]/u;
/** whitespace a name's spaces collapse: ASCII white space and the space separators (Zs), but not
 *  the byte-order mark or the line separators JavaScript's \s also matches (those are refused) */
const WHITESPACE_RUN = /[\t\n\v\f\r\p{Zs}]+/gu;

/** Characters (code points), not UTF-16 units: an emoji counts once. */
export function characterCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** A value as it may appear in an error message: quoted, escaped, and cut short. */
export function quoted(raw: string, max = 64): string {
  const cut = characterCount(raw) > max ? `${[...raw].slice(0, max).join('')}…` : raw;
  return JSON.stringify(cut);
}

/** What is wrong with the characters of a text, or undefined. */
function characterProblem(text: string, freeText: boolean): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'is not well-formed Unicode (it holds a lone surrogate)';
  if ((freeText ? CONTROL_IN_FREE_TEXT : CONTROL).test(text)) {
    return `must not contain control characters${freeText ? ' (line breaks and tabs are allowed)' : ''}`;
  }
  if (SEPARATORS.test(text) || (freeText ? FORMAT_BUT_JOINERS : INVISIBLE).test(text)) {
    return 'must not contain invisible characters (zero-width, bidirectional, fillers or similar)';
  }
  return undefined;
}

function lengthProblem(text: string, min: number, max: number): string | undefined {
  const n = characterCount(text);
  if (n >= min && n <= max) return undefined;
  return min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`;
}

/** NFC, trimmed, every run of whitespace one space. */
function oneLine(raw: string): string {
  return raw.normalize('NFC').trim().replace(WHITESPACE_RUN, ' ');
}

/** The comparison key of a name: what uniqueness and searches compare. Upper then lower case
 *  approximates full case folding (`straße` and `STRASSE` meet at `strasse`). */
export function nameKey(name: string): string {
  return name.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

export interface Name {
  /** as stored and shown: NFC, trimmed, whitespace runs collapsed */
  name: string;
  /** what is compared: see nameKey */
  key: string;
}

/** What is wrong with a name, or undefined (for callers that collect problems, like configuration). */
export function nameProblem(raw: string, max: number = TEXT_LIMITS.name): string | undefined {
  const name = oneLine(raw);
  if (name.length === 0) return 'must not be empty';
  return characterProblem(name, false) ?? lengthProblem(name, 1, max);
}

/** A name (tenant, client, label, service, subscription): required, one line, visible characters only. */
export function checkName(raw: string, field: string, max: number = TEXT_LIMITS.name): Name {
  const problem = nameProblem(raw, max);
  if (problem) throw badInput(`${field} ${problem}`, { field });
  const name = oneLine(raw);
  return { name, key: nameKey(name) };
}

function optionalText(raw: string | null | undefined, field: string, max: number, freeText: boolean): string | null {
  if (raw === null || raw === undefined) return null;
  const text = raw.normalize('NFC').trim();
  const problem = characterProblem(text, freeText) ?? lengthProblem(text, 0, max);
  if (problem) throw badInput(`${field} ${problem}`, { field });
  return text === '' ? null : text;
}

/** Short one-line text that is not a name (a label value, an approver): NFC, trimmed; empty is null. */
export function checkLine(raw: string | null | undefined, field: string, max: number): string | null {
  return optionalText(raw, field, max, false);
}

/** Free text (descriptions, reasons): NFC, line breaks allowed, bounded; empty is null. */
export function checkFreeText(raw: string | null | undefined, field: string, max: number = TEXT_LIMITS.description): string | null {
  return optionalText(raw, field, max, true);
}

/**
 * A name filter of a search: the same rules as the names it is compared with, turned into their
 * key form. With `%` it is a LIKE pattern (`%` a wildcard, `_` and `\` literal); without, an
 * exact key. Whitespace only is as empty as nothing: refused.
 */
export function searchKey(raw: string, field: string): { pattern: string; wildcard: boolean } {
  const text = oneLine(raw);
  if (text.length === 0) throw badInput(`${field} must not be empty (send at least one character, or % for any)`, { field });
  const problem = characterProblem(text, false) ?? lengthProblem(text, 1, TEXT_LIMITS.search);
  if (problem) throw badInput(`${field} ${problem}`, { field });
  const key = nameKey(text);
  const wildcard = key.includes('%');
  return { pattern: wildcard ? key.replace(/[\\_]/g, (c) => '\\' + c) : key, wildcard };
}

/** An opaque token a caller hands back (a cursor, an id of ours): bounded, and storable as text. */
export function checkOpaque(raw: string, field: string, max: number): string {
  if (raw.length > max * 2 || characterCount(raw) > max) throw badInput(`${field} must be at most ${max} characters`, { field });
  if (LONE_SURROGATE.test(raw) || raw.includes('\u0000')) throw badInput(`${field} is not valid`, { field });
  return raw;
}
