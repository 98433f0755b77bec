#!/usr/bin/env node
// Runs the TypeScript sources through tsx, from any working directory.
import { register } from "tsx/esm/api";

register();
const { kafkaMirrorsMain } = await import("../src/commands/kafka-mirrors.ts");
process.exitCode = await kafkaMirrorsMain(process.argv.slice(2));
