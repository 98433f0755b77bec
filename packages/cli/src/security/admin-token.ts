import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { OperationError } from "../commands/cli-errors";

/** The file in a node's data dir that holds its admin token (mode 0600, one line). */
export const ADMIN_TOKEN_FILE = "admin.token";

/** The node's admin token and, when it has a data dir, the file it lives in. */
export interface AdminToken {
  token: string;
  /** `<dataDir>/admin.token`; undefined for an in-memory node (the token lives only in the process). */
  file: string | undefined;
}

/**
 * A new admin token: 32 bytes from the operating system's CSPRNG, base64url. The one place the node reads
 * real randomness outside an injected `Random`: a token must not be predictable from a seed.
 */
export function newAdminToken(): string {
  return crypto.randomBytes(32).toString("base64url");
}

/**
 * The node's admin token: read from `<dataDir>/admin.token`, or generated there (mode 0600) at first start,
 * so a restarted node keeps it and the CLIs keep working. Refuses a token file that other users may read
 * (as ssh refuses a private key): OperationError saying to `chmod 600` it. Without `dataDir`, a fresh token.
 */
export function loadOrCreateAdminToken(
  dataDir: string | undefined,
  generate: () => string = newAdminToken,
): AdminToken {
  if (dataDir === undefined) return { token: generate(), file: undefined };
  const file = path.join(dataDir, ADMIN_TOKEN_FILE);
  if (!fs.existsSync(file)) {
    const token = generate();
    // 'wx': never overwrite a token another process just wrote; mode 0600 from the start (no chmod race).
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
    return { token, file };
  }
  const mode = fs.statSync(file).mode & 0o777;
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    throw new OperationError(
      `${file} is readable by other users (mode ${mode.toString(8)}); anyone who reads it controls the node. Run 'chmod 600 ${file}' and start again`,
    );
  }
  const token = fs.readFileSync(file, "utf8").trim();
  if (token.length < 16) {
    throw new OperationError(
      `${file} holds no usable token (fewer than 16 characters); delete it and the node writes a new one at start`,
    );
  }
  return { token, file };
}
