/**
 * String literals of protobuf text format: decoding a quoted literal (with C-style, octal, hex and Unicode
 * escapes) into bytes, and quoting strings and bytes so they parse back unchanged.
 */

/** Called with the offset (inside the literal, quotes included) and reason of a malformed escape. */
export type EscapeErrorReporter = (offset: number, reason: string) => never;

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  "\\": 92,
  "'": 39,
  '"': 34,
  "?": 63,
};

const encoder = new TextEncoder();

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function pushUtf8(out: number[], cp: number): void {
  if (cp < 0x80) out.push(cp);
  else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
  else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
}

/** True when the literal has no escapes and only ASCII, so its content is its value. */
export function isPlainAsciiLiteral(raw: string): boolean {
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw.charCodeAt(i);
    if (c === 92 || c >= 0x80) return false;
  }
  return true;
}

/**
 * Decodes one quoted literal (quotes included, as the tokenizer returns it) to the bytes it denotes.
 * Source characters are taken as UTF-8.
 */
export function decodeLiteral(raw: string, report: EscapeErrorReporter): Uint8Array {
  const out: number[] = [];
  const end = raw.length - 1;
  let i = 1;
  while (i < end) {
    const c = raw.charCodeAt(i);
    if (c !== 92) {
      if (c < 0x80) {
        out.push(c);
        i++;
      } else {
        const cp = raw.codePointAt(i) ?? c;
        for (const b of encoder.encode(String.fromCodePoint(cp))) out.push(b);
        i += cp > 0xffff ? 2 : 1;
      }
      continue;
    }
    const escapeStart = i;
    const e = raw[i + 1] ?? "";
    i += 2;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out.push(simple);
    } else if (e >= "0" && e <= "7") {
      let value = e.charCodeAt(0) - 48;
      for (let n = 0; n < 2 && i < end && raw.charCodeAt(i) >= 48 && raw.charCodeAt(i) <= 55; n++, i++) {
        value = value * 8 + raw.charCodeAt(i) - 48;
      }
      if (value > 255) report(escapeStart, `octal escape ${raw.slice(escapeStart, i)} is above \\377`);
      out.push(value);
    } else if (e === "x" || e === "X") {
      let value = 0;
      let digits = 0;
      for (; digits < 2 && i < end && hexValue(raw.charCodeAt(i)) >= 0; digits++, i++) {
        value = value * 16 + hexValue(raw.charCodeAt(i));
      }
      if (digits === 0) report(escapeStart, "\\x must be followed by 1 or 2 hex digits");
      out.push(value);
    } else if (e === "u" || e === "U") {
      i = decodeUnicodeEscape(raw, escapeStart, end, out, report);
    } else {
      report(
        escapeStart,
        `invalid escape sequence \\${e} (allowed: \\n \\t \\r \\\\ \\' \\" \\a \\b \\f \\v \\? \\NNN \\xHH \\uXXXX \\UXXXXXXXX)`,
      );
    }
  }
  return Uint8Array.from(out);
}

function readHex(raw: string, at: number, count: number, end: number): number {
  if (at + count > end) return -1;
  let value = 0;
  for (let k = 0; k < count; k++) {
    const h = hexValue(raw.charCodeAt(at + k));
    if (h < 0) return -1;
    value = value * 16 + h;
  }
  return value;
}

/** Decodes `\uXXXX` (joining a surrogate pair written as two escapes) or `\UXXXXXXXX`; returns the new index. */
function decodeUnicodeEscape(
  raw: string,
  escapeStart: number,
  end: number,
  out: number[],
  report: EscapeErrorReporter,
): number {
  const long = raw[escapeStart + 1] === "U";
  const count = long ? 8 : 4;
  const cp = readHex(raw, escapeStart + 2, count, end);
  if (cp < 0) report(escapeStart, `\\${long ? "U" : "u"} must be followed by exactly ${count} hex digits`);
  if (cp > 0x10ffff)
    report(escapeStart, `${raw.slice(escapeStart, escapeStart + 2 + count)} is above U+10FFFF`);
  let next = escapeStart + 2 + count;
  let codePoint = cp;
  if (cp >= 0xd800 && cp <= 0xdbff) {
    const low = raw[next] === "\\" && raw[next + 1] === "u" ? readHex(raw, next + 2, 4, end) : -1;
    if (low < 0xdc00 || low > 0xdfff) report(escapeStart, "unpaired surrogate in Unicode escape");
    codePoint = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    next += 6;
  } else if (cp >= 0xdc00 && cp <= 0xdfff) {
    report(escapeStart, "unpaired surrogate in Unicode escape");
  }
  pushUtf8(out, codePoint);
  return next;
}

function octal(byte: number): string {
  return `\\${byte.toString(8).padStart(3, "0")}`;
}

/**
 * Quotes a string for text format: `"` and `\` escaped, `\n \r \t` by name, other control characters as
 * octal escapes of their UTF-8 bytes; printable Unicode stays as written. Returns undefined when the
 * string holds an unpaired surrogate (it has no UTF-8 form).
 */
export function quoteString(value: string): string | undefined {
  let out = '"';
  let runStart = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    let escaped: string | undefined;
    if (c === 34) escaped = '\\"';
    else if (c === 92) escaped = "\\\\";
    else if (c === 10) escaped = "\\n";
    else if (c === 13) escaped = "\\r";
    else if (c === 9) escaped = "\\t";
    else if (c < 0x20 || c === 0x7f) escaped = octal(c);
    else if (c >= 0xd800 && c <= 0xdfff) {
      const low = value.charCodeAt(i + 1);
      if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) return undefined;
      i++;
    }
    if (escaped !== undefined) {
      out += value.slice(runStart, i) + escaped;
      runStart = i + 1;
    }
  }
  return `${out}${value.slice(runStart)}"`;
}

/** Quotes bytes for text format: printable ASCII as is, `\n \r \t` by name, everything else octal. */
export function quoteBytes(bytes: Uint8Array): string {
  let out = '"';
  for (const b of bytes) {
    if (b === 34) out += '\\"';
    else if (b === 92) out += "\\\\";
    else if (b === 10) out += "\\n";
    else if (b === 13) out += "\\r";
    else if (b === 9) out += "\\t";
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += octal(b);
  }
  return `${out}"`;
}
