/**
 * Parses a Java properties file (`java.util.Properties.load` rules), as `--mirror-config FILE` and
 * `--command-config FILE` take: `key=value`, `key: value` or `key value`; `#` and `!` comment lines; a line
 * ending in an odd number of backslashes continues on the next one (whose leading whitespace is dropped);
 * `\t`, `\n`, `\r`, `\f`, `\uXXXX` escapes, and `\x` for any other `x`. A later key replaces an earlier one.
 * A key alone on its line (no `=`, `:` or value) gets the empty value, as in Java; `onBareKey` hears each
 * such key with its line number (1-based), for callers to whom that is more likely a mistake.
 */
export function parseProperties(
  text: string,
  options: { onBareKey?: (key: string, line: number) => void } = {},
): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = stripLeading(lines[i]!);
    if (line === "" || line.startsWith("#") || line.startsWith("!")) continue;
    const first = i + 1;
    while (endsWithContinuation(line) && i + 1 < lines.length) {
      i++;
      line = line.slice(0, -1) + stripLeading(lines[i]!);
    }
    if (endsWithContinuation(line)) line = line.slice(0, -1);
    const [key, value, bare] = splitKeyValue(line);
    if (bare) options.onBareKey?.(unescapeProperty(key), first);
    result[unescapeProperty(key)] = unescapeProperty(value);
  }
  return result;
}

const WHITESPACE = new Set([" ", "\t", "\f"]);

function stripLeading(line: string): string {
  let i = 0;
  while (i < line.length && WHITESPACE.has(line[i]!)) i++;
  return line.slice(i);
}

function endsWithContinuation(line: string): boolean {
  let backslashes = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === "\\"; i--) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * Splits at the first unescaped `=`, `:` or whitespace; the separator may be whitespace around one `=`/`:`.
 * The third element is true when the line is a key alone (no separator, nothing after the key but blanks).
 */
function splitKeyValue(line: string): [string, string, boolean] {
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === "\\") {
      i += 2;
      continue;
    }
    if (c === "=" || c === ":" || WHITESPACE.has(c)) break;
    i++;
  }
  const key = line.slice(0, Math.min(i, line.length));
  let j = i;
  while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  const bare = j >= line.length;
  if (j < line.length && (line[j] === "=" || line[j] === ":")) j++;
  while (j < line.length && WHITESPACE.has(line[j]!)) j++;
  return [key, line.slice(j), bare];
}

const ESCAPES: Record<string, string> = { t: "\t", n: "\n", r: "\r", f: "\f" };

function unescapeProperty(text: string): string {
  if (!text.includes("\\")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const next = text[++i]!;
    if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) {
      out += String.fromCharCode(Number.parseInt(text.slice(i + 1, i + 5), 16));
      i += 4;
    } else {
      out += ESCAPES[next] ?? next;
    }
  }
  return out;
}
