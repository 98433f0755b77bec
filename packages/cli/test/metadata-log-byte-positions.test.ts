import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { encodeMetadataEntry, readMetadataLog } from "../src/persistence/metadata-log-file";
import { tempDir } from "./cli-harness";

describe("metadata log reader: cutting a torn tail in place", () => {
  it("cuts at the byte where the torn line starts, whatever bytes the lines before hold", () => {
    const file = path.join(tempDir("cm-meta-bytes"), "metadata.log");
    const first = encodeMetadataEntry({
      offset: 0,
      record: { type: "ProducerIds", nextProducerId: 1000n },
    });
    // A complete line whose string holds a byte that is not UTF-8 (a flipped bit): it still parses (as
    // U+FFFD, three bytes when encoded again), but is one byte on disk.
    const line = Buffer.concat([
      Buffer.from(first.slice(0, -1), "utf8"),
      Buffer.from(',"x":"', "utf8"),
      Buffer.from([0xff]),
      Buffer.from('"}\n', "utf8"),
    ]);
    fs.writeFileSync(file, Buffer.concat([line, Buffer.from('{"offset":1,"rec', "utf8")]));

    expect(readMetadataLog(file)).toHaveLength(1);
    expect(fs.readFileSync(file).equals(line)).toBe(true);
  });
});
