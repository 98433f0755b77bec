#!/usr/bin/env node
// Runs the TypeScript sources through tsx, from any working directory (the installed package's bin is
// dist/bin/kafka-mirrors.js instead, built from the same src/bin/kafka-mirrors.ts).
import { register } from "tsx/esm/api";

register();
await import("../src/bin/kafka-mirrors.ts");
