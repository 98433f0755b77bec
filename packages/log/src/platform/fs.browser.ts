import { unavailable } from "./unavailable";

/** Browser build of the `node:fs` functions file storage uses: each throws a message saying it needs Node.js. */
export const appendFileSync = unavailable("fs.appendFileSync");
export const closeSync = unavailable("fs.closeSync");
export const existsSync = unavailable("fs.existsSync");
export const fstatSync = unavailable("fs.fstatSync");
export const fsyncSync = unavailable("fs.fsyncSync");
export const ftruncateSync = unavailable("fs.ftruncateSync");
export const mkdirSync = unavailable("fs.mkdirSync");
export const openSync = unavailable("fs.openSync");
export const readFileSync = unavailable("fs.readFileSync");
export const readSync = unavailable("fs.readSync");
export const readdirSync = unavailable("fs.readdirSync");
export const renameSync = unavailable("fs.renameSync");
export const rmSync = unavailable("fs.rmSync");
export const statSync = unavailable("fs.statSync");
export const truncateSync = unavailable("fs.truncateSync");
export const unlinkSync = unavailable("fs.unlinkSync");
export const writeFileSync = unavailable("fs.writeFileSync");
export const writeSync = unavailable("fs.writeSync");
