/** Node.js: native packages (CRC-32C, compression codecs) load through `createRequire`. */
export { createRequire } from "node:module";
