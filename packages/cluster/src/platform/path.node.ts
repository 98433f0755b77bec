/** Node.js: the data dir's paths come from Node's path module. */
export { join, resolve } from "node:path";
