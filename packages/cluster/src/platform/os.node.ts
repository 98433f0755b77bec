/** Node.js: the data-dir lock records the host name. */
export { hostname } from "node:os";
