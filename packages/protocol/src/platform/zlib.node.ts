/** Node.js: gzip through zlib (native). */
export { gunzipSync, gzipSync } from "node:zlib";
