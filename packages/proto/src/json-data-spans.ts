/**
 * Where tensor `data` arrays sit in a KServe v2 JSON document, as text, so that 64-bit integers can be read
 * from their digits: JSON.parse turns every number into a double, which holds integers exactly only up to
 * 2^53 (Node 20 has no JSON.parse source-text access). The document is still parsed by JSON.parse (fast,
 * and it validates the syntax); this walker only runs over a document that has INT64/UINT64 JSON data,
 * and only skips over values, building none. The server's request decoder and the client's response decoder
 * both use it, which is why it lives here.
 */

/** A value's source text: `text.slice(start, end)`. */
export interface TextSpan {
  readonly start: number;
  readonly end: number;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function skipWhitespace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `i` is at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let k = quote - 1; text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The characters a compound value's end depends on: quotes and brackets. */
const STRUCTURAL = /["[\]{}]/g;

/** `i` is at the first character of a value; returns the index after it. */
export function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return skipString(text, i);
  if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
    // Jumps from one structural character to the next (the regex engine skips the numbers between).
    let depth = 0;
    STRUCTURAL.lastIndex = i;
    for (;;) {
      const match = STRUCTURAL.exec(text);
      if (match === null) return text.length;
      const at = match.index;
      const ch = text.charCodeAt(at);
      if (ch === QUOTE) STRUCTURAL.lastIndex = skipString(text, at);
      else if (ch === OPEN_ARRAY || ch === OPEN_OBJECT) depth++;
      else if (--depth === 0) return at + 1;
    }
  }
  let j = i;
  while (j < text.length) {
    const ch = text.charCodeAt(j);
    if (ch === COMMA || ch === CLOSE_ARRAY || ch === CLOSE_OBJECT || ch <= 0x20) break;
    j++;
  }
  return j;
}

/**
 * Calls `visit` with the start and end of each leaf element of the `data` array at `span`, in document
 * (row-major) order, nested arrays flattened: the element's source text is `text.slice(start, end)`.
 * The decoders read 64-bit integers from these texts.
 */
export function forEachDataElement(
  text: string,
  span: TextSpan,
  visit: (start: number, end: number) => void,
): void {
  let p = span.start;
  while (p < span.end) {
    const c = text.charCodeAt(p);
    if (c === OPEN_ARRAY || c === CLOSE_ARRAY || c === COMMA || c <= 0x20) {
      p++; // [ ] , and whitespace between elements
      continue;
    }
    const end = skipValue(text, p);
    visit(p, end);
    p = end;
  }
}

/**
 * Walks the members of the object at `i`, calling `visit` with each key and the index of its value;
 * `visit` returns the index after the value (it may walk into it). Returns the index after the object.
 */
function walkMembers(text: string, i: number, visit: (key: string, value: number) => number): number {
  if (text.charCodeAt(i) !== OPEN_OBJECT) return skipValue(text, i);
  i = skipWhitespace(text, i + 1);
  while (i < text.length && text.charCodeAt(i) === QUOTE) {
    const keyEnd = skipString(text, i);
    const raw = text.slice(i + 1, keyEnd - 1);
    // JSON.parse reads escaped keys ("da\u0074a") as their characters; so does this.
    const key = raw.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : raw;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== COLON) return i;
    i = skipWhitespace(text, visit(key, skipWhitespace(text, i + 1)));
    if (text.charCodeAt(i) !== COMMA) return i + 1;
    i = skipWhitespace(text, i + 1);
  }
  return i + 1;
}

/** Walks the elements of the array at `i`, as walkMembers does the members of an object. */
function walkElements(text: string, i: number, visit: (index: number, value: number) => number): number {
  if (text.charCodeAt(i) !== OPEN_ARRAY) return skipValue(text, i);
  i = skipWhitespace(text, i + 1);
  let index = 0;
  while (i < text.length && text.charCodeAt(i) !== CLOSE_ARRAY) {
    i = skipWhitespace(text, visit(index++, i));
    if (text.charCodeAt(i) !== COMMA) return i + 1;
    i = skipWhitespace(text, i + 1);
  }
  return i + 1;
}

/**
 * For each element of the document's top-level array member `arrayKey` (`inputs` or `outputs`), the span of
 * its `data` member, or undefined where it has none. A repeated key counts by its last occurrence, as in
 * JSON.parse, so the spans belong to the values JSON.parse returned. `text` must be valid JSON. One pass:
 * each character is looked at once.
 */
export function findDataSpans(text: string, arrayKey: string): (TextSpan | undefined)[] {
  let spans: (TextSpan | undefined)[] = [];
  walkMembers(text, skipWhitespace(text, 0), (key, value) => {
    if (key !== arrayKey) return skipValue(text, value);
    const found: (TextSpan | undefined)[] = [];
    const end = walkElements(text, value, (index, element) => {
      found[index] = undefined;
      return walkMembers(text, element, (member, start) => {
        const memberEnd = skipValue(text, start);
        if (member === "data") found[index] = { start, end: memberEnd };
        return memberEnd;
      });
    });
    spans = found;
    return end;
  });
  return spans;
}

/**
 * The source text span of the member at `path` (object keys from the top, e.g. ["parameters",
 * "sequence_id"]), or undefined where the document has none. A repeated key counts by its last occurrence,
 * as in JSON.parse. `text` must be valid JSON. For a 64-bit integer that JSON.parse turned into a double.
 */
export function findMemberSpan(text: string, path: readonly string[]): TextSpan | undefined {
  let found: TextSpan | undefined;
  const walk = (at: number, depth: number): number =>
    walkMembers(text, at, (key, value) => {
      if (key !== path[depth]) return skipValue(text, value);
      if (depth === path.length - 1) {
        const end = skipValue(text, value);
        found = { start: value, end };
        return end;
      }
      found = undefined;
      return walk(value, depth + 1);
    });
  if (path.length > 0) walk(skipWhitespace(text, 0), 0);
  return found;
}
