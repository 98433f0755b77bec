/**
 * `node:fs` in the browser: only file-backed logs and data-dir locks use it (packages/log's
 * FileLogStorage, packages/cluster's data dir), and scenarios run in memory, so each function only says so.
 */
import { unavailable } from "./unavailable";

export const closeSync = unavailable("node:fs closeSync");
export const existsSync = unavailable("node:fs existsSync");
export const fstatSync = unavailable("node:fs fstatSync");
export const fsyncSync = unavailable("node:fs fsyncSync");
export const ftruncateSync = unavailable("node:fs ftruncateSync");
export const mkdirSync = unavailable("node:fs mkdirSync");
export const openSync = unavailable("node:fs openSync");
export const readFileSync = unavailable("node:fs readFileSync");
export const readSync = unavailable("node:fs readSync");
export const readdirSync = unavailable("node:fs readdirSync");
export const realpathSync = unavailable("node:fs realpathSync");
export const renameSync = unavailable("node:fs renameSync");
export const rmSync = unavailable("node:fs rmSync");
export const rmdirSync = unavailable("node:fs rmdirSync");
export const unlinkSync = unavailable("node:fs unlinkSync");
export const writeFileSync = unavailable("node:fs writeFileSync");
export const writeSync = unavailable("node:fs writeSync");
