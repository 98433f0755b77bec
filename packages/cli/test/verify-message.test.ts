import { describe, expect, it } from "vitest";
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
      "mirror m differs from its source in offsets; see the table above (a mirror still catching up differs in offsets and batches until its lag is 0)",
    );
    const both = verifyFailureMessage({ mirror: "m", checks: [row("batches", false), row("acls", false)] });
    expect(both).toContain("in batches, acls;");
    expect(both).toContain(
      "until its lag is 0; configs, ACLs and group offsets are copied by the metadata sync",
    );
  });
});
