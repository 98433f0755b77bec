/** Node.js: file storage builds paths with Node's path module. */
export { basename, dirname, join, resolve } from "node:path";
