#!/usr/bin/env node
// The `kafka-mirrors` command: the installed package runs this file built to JavaScript; in this
// repository bin/kafka-mirrors.mjs runs it from TypeScript through tsx.
import { ignoreClosedStdout } from "../commands/closed-stdout";
import { kafkaMirrorsMain } from "../commands/kafka-mirrors";

ignoreClosedStdout();

process.exitCode = await kafkaMirrorsMain(process.argv.slice(2));
