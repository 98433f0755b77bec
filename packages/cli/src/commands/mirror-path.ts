import { UsageError } from "./cli-errors";

/**
 * The admin API path of a mirror (`/v1/mirrors/NAME`). A name of `.` or `..` is refused here, as the node
 * refuses to create one (they are reserved, as for Kafka topics): in a URL they are path segments that the
 * client resolves away, so `--delete --mirror ..` sent DELETE /v1/ and printed the node's "no route".
 */
export function mirrorPath(mirror: string): string {
  if (mirror === "." || mirror === "..") {
    throw new UsageError(
      `Mirror name '${mirror}' is invalid: '.' and '..' are reserved (no mirror has them); kafka-mirrors --list lists the mirrors`,
    );
  }
  return `/v1/mirrors/${encodeURIComponent(mirror)}`;
}
