/** `node:zlib` in the browser: gzip batches are not produced by the scenarios. */
import { unavailable } from "./unavailable";

export const gzipSync = unavailable("gzip (node:zlib)");
export const gunzipSync = unavailable("gunzip (node:zlib)");
