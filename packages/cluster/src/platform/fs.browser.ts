import { unavailable } from "./unavailable";

/** Browser build of the `node:fs` functions file storage uses: each throws a message saying it needs Node.js. */
export const closeSync = unavailable("fs.closeSync");
export const fsyncSync = unavailable("fs.fsyncSync");
export const mkdirSync = unavailable("fs.mkdirSync");
export const openSync = unavailable("fs.openSync");
export const readdirSync = unavailable("fs.readdirSync");
export const readFileSync = unavailable("fs.readFileSync");
export const realpathSync = unavailable("fs.realpathSync");
export const renameSync = unavailable("fs.renameSync");
export const rmSync = unavailable("fs.rmSync");
export const rmdirSync = unavailable("fs.rmdirSync");
export const unlinkSync = unavailable("fs.unlinkSync");
export const writeSync = unavailable("fs.writeSync");
