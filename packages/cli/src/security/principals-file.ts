import * as fs from "node:fs";
import { UsageError } from "../commands/cli-errors";
import { ADMIN_PRINCIPAL, NODE_PRINCIPAL, type PrincipalToken } from "./admin-auth";

const PRINCIPALS_EXAMPLE = `e.g. [{"principal": "User:alice", "token": "<at least 16 random characters>"}]`;

/**
 * Reads `--principals FILE`: a JSON array of `{"principal": "User:alice", "token": "..."}`, one token per
 * principal (at least 16 characters, each used once). The file holds secrets, so, like the admin token, it
 * must not be readable by other users. UsageError naming the entry and what is wrong otherwise.
 */
export function readPrincipalsFile(file: string): PrincipalToken[] {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read --principals ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)}); pass a readable JSON file (mode 0600) of principals and their tokens, ${PRINCIPALS_EXAMPLE}`,
    );
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new UsageError(
      `--principals ${file} is readable by other users (mode ${mode.toString(8)}) and holds tokens; run 'chmod 600 ${file}'`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--principals ${file} is not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed))
    throw new UsageError(`--principals ${file} must hold a JSON array, ${PRINCIPALS_EXAMPLE}`);
  const out: PrincipalToken[] = [];
  for (const [i, entry] of parsed.entries()) {
    const where = `--principals ${file} entry ${i}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      throw new UsageError(`${where} must be an object, ${PRINCIPALS_EXAMPLE}`);
    // A key this file does not know (a "role", a misspelt "tokn") would be read as nothing at all.
    const unknown = Object.keys(entry).find((k) => k !== "principal" && k !== "token");
    if (unknown !== undefined) {
      throw new UsageError(
        `${where}: unknown key '${unknown}' (an entry has only 'principal' and 'token'; what a principal may do is set with 'cluster-mirror acls --add')`,
      );
    }
    const { principal, token } = entry as { principal?: unknown; token?: unknown };
    if (typeof principal !== "string" || !/^[^:]+:.+$/.test(principal)) {
      throw new UsageError(`${where}: 'principal' must be Type:name, ${PRINCIPALS_EXAMPLE}`);
    }
    if (principal === ADMIN_PRINCIPAL || principal === NODE_PRINCIPAL) {
      throw new UsageError(`${where}: ${principal} is the node's own principal; choose another name`);
    }
    if (typeof token !== "string" || token.length < 16) {
      throw new UsageError(`${where}: 'token' must be a string of at least 16 characters`);
    }
    if (out.some((p) => p.token === token))
      throw new UsageError(`${where}: the token of ${principal} is used twice`);
    if (out.some((p) => p.principal === principal))
      throw new UsageError(`${where}: ${principal} is listed twice; give each principal one token`);
    out.push({ principal, token });
  }
  return out;
}
