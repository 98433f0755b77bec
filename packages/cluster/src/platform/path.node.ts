/** Node.js: the data dir's paths come from Node's path module. */
export { dirname, join, resolve } from "node:path";
