/** `node:path` in the browser: POSIX joins, enough for names built but never opened in memory mode. */
export function join(...parts: string[]): string {
  return parts
    .filter((p) => p !== "")
    .join("/")
    .replace(/\/+/g, "/");
}
export const resolve = join;
export function dirname(p: string): string {
  return p.replace(/\/[^/]*$/, "") || "/";
}
export function basename(p: string): string {
  return p.replace(/^.*\//, "");
}
export const sep = "/";
export default { join, resolve, dirname, basename, sep };
