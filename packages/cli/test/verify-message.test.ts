import { describe, expect, it } from "vitest";
import { formatVerifyTable } from "../src/commands/mirror-tables";
import { verifyFailureMessage } from "../src/commands/verify-command";

const row = (check: string, ok: boolean) => ({ check, ok, compared: "", differences: [] });

describe("cluster-mirror verify's error line", () => {
  it("a difference only in group offsets points at the metadata sync interval, not at lag", () => {
    const message = verifyFailureMessage({
      mirror: "back",
      checks: [row("batches", true), row("offsets", true), row("group offsets", false)],
    });
    expect(message).toBe(
      "mirror back differs from its source in group offsets; see the table above (configs, ACLs and group offsets are copied by the metadata sync, every mirror.metadata.refresh.interval.ms (30000 by default): run verify again after one interval)",
    );
  });

  it("a difference in offsets points at lag; both kinds name both reasons", () => {
    expect(verifyFailureMessage({ mirror: "m", checks: [row("offsets", false), row("configs", true)] })).toBe(
      "mirror m differs from its source in offsets; see the table above (a mirror still catching up differs in offsets until its lag is 0)",
    );
    const both = verifyFailureMessage({ mirror: "m", checks: [row("offsets", false), row("acls", false)] });
    expect(both).toContain("in offsets, acls;");
    expect(both).toContain(
      "until its lag is 0; configs, ACLs and group offsets are copied by the metadata sync",
    );
  });

  it("a difference in batches is not put down to lag: only batches below the high watermark are compared", () => {
    const message = verifyFailureMessage({
      mirror: "m",
      checks: [row("batches", false), row("offsets", true)],
    });
    expect(message).toBe(
      "mirror m differs from its source in batches; see the table above (differing batches are not lag: the copy holds other records than its source at those offsets (for a compacted topic, another latest record of a key); find out why before a failover)",
    );
    expect(message).not.toContain("lag is 0");
  });
});

describe("cluster-mirror verify with a check the source refused", () => {
  const refused = {
    check: "acls",
    ok: false,
    notCompared: true as const,
    compared: "not compared (the source refused DescribeAcls: CLUSTER_AUTHORIZATION_FAILED)",
    differences: ["grant the mirror's principal DESCRIBE on the source's CLUSTER"],
  };

  it("says it could not compare, not that the mirror differs or lags", () => {
    expect(verifyFailureMessage({ mirror: "m", checks: [row("batches", true), refused] })).toBe(
      "mirror m: could not compare acls; see the table above for what to do",
    );
    expect(verifyFailureMessage({ mirror: "m", checks: [row("offsets", false), refused] })).toBe(
      "mirror m differs from its source in offsets and could not compare acls; see the table above (a mirror still catching up differs in offsets until its lag is 0)",
    );
  });

  it("shows NOT COMPARED in the table, not DIFFERS", () => {
    const text = formatVerifyTable({
      mirror: "m",
      topics: ["orders"],
      ok: false,
      checks: [{ ...row("batches", true), compared: "1 partition" }, refused],
    });
    expect(text.split("\n")[0]).toBe("Mirror m (orders): 1 check(s) not compared");
    expect(text).toMatch(/acls +│ NOT COMPARED │ not compared \(the source refused DescribeAcls/);
    expect(text).not.toContain("DIFFERS");
  });
});
