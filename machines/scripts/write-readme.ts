import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateReadme } from "../src/readme";

// Regenerates machines/README.md from the machine definitions; a test fails when the file is stale.
const file = join(dirname(fileURLToPath(import.meta.url)), "..", "README.md");
writeFileSync(file, generateReadme());
console.log(`wrote ${file}`);
