import { describe, expect, it } from "vitest";
import {
  formatDescribeJson,
  formatDescribeTable,
  formatListTable,
  type MirrorDescribeRow,
} from "../src/admin/describe-format";

function row(
  mirror: string,
  topic: string,
  partition: number,
  src: bigint,
  dst: bigint,
  extra: Partial<MirrorDescribeRow> = {},
): MirrorDescribeRow {
  return {
    mirror,
    topic,
    partition,
    sourceOffset: src,
    destinationOffset: dst,
    lag: src - dst,
    state: "MIRRORING",
    errorMessage: null,
    retryAttempt: 0,
    lastMirrorEpoch: -1,
    ...extra,
  };
}

/** The seeds' describe output (000_a013b23ca1a05147.txt), byte for byte (trailing spaces included). */
const SEED_TABLE = [
  "MIRROR                         TOPIC                                    PARTITION  SOURCE-OFFSET   DESTINATION-OFFSET LAG      STATE       ",
  "my-mirror                      bar                                      0          2324            2324               0        MIRRORING   ",
  "my-mirror                      foo                                      0          69              66                 3        MIRRORING   ",
  "my-mirror                      foo                                      1          94              84                 10       MIRRORING   ",
  "my-mirror                      foo                                      2          94              90                 4        MIRRORING   ",
  "new-mirror                     baz                                      0          189             189                0        MIRRORING   ",
  "new-mirror                     baz                                      1          859             859                0        MIRRORING   ",
  "",
].join("\n");

describe("describe output", () => {
  it("prints the seeds' table exactly", () => {
    const rows = [
      row("my-mirror", "bar", 0, 2324n, 2324n),
      row("my-mirror", "foo", 0, 69n, 66n),
      row("my-mirror", "foo", 1, 94n, 84n),
      row("my-mirror", "foo", 2, 94n, 90n),
      row("new-mirror", "baz", 0, 189n, 189n),
      row("new-mirror", "baz", 1, 859n, 859n),
    ];
    expect(formatDescribeTable(rows)).toBe(SEED_TABLE);
  });

  it("adds RETRY and ERROR columns in the failed view, and prints unknown offsets as -", () => {
    const rows = [
      row("m", "t", 0, 5n, 5n, {
        state: "FAILED",
        retryAttempt: -1,
        errorMessage: "The source topic is deleted.",
      }),
      {
        ...row("m", "t", 1, 0n, 0n, { state: "FAILED", retryAttempt: 3, errorMessage: "boom" }),
        sourceOffset: null,
        lag: null,
      },
    ];
    expect(formatDescribeTable(rows, { failed: true, maxRetryAttempts: 10 })).toBe(
      [
        "MIRROR                         TOPIC                                    PARTITION  SOURCE-OFFSET   DESTINATION-OFFSET LAG      STATE        RETRY         ERROR",
        "m                              t                                        0          5               5                  0        FAILED       NonRetryable  The source topic is deleted.",
        "m                              t                                        1          -               0                  -        FAILED       3/10          boom",
        "",
      ].join("\n"),
    );
  });

  it("prints JSON rows with numeric offsets", () => {
    const json = JSON.parse(formatDescribeJson([row("m", "t", 0, 10n, 7n)]));
    expect(json).toEqual([
      {
        mirror: "m",
        topic: "t",
        partition: 0,
        sourceOffset: 10,
        destinationOffset: 7,
        lag: 3,
        state: "MIRRORING",
        errorMessage: null,
        retryAttempt: 0,
        lastMirrorEpoch: -1,
      },
    ]);
  });

  it("prints the list table", () => {
    expect(
      formatListTable([{ name: "m", topics: ["a", "b"], sourceClusterId: "abc", sourceBootstrap: "s:9092" }]),
    ).toBe(
      [
        "MIRROR                         TOPICS   SOURCE-CLUSTER-ID        SOURCE-BOOTSTRAP-SERVER",
        "m                              2        abc                      s:9092",
        "",
      ].join("\n"),
    );
  });
});
