import { describe, expect, it } from "vitest";
import { runDemo } from "../src/demo/demo";

describe("cluster-mirror demo: the commands each step stands for (issue 15)", () => {
  it("prints both --create commands (forward and failback) with the lines kafka-mirrors prints", async () => {
    let out = "";
    await runDemo({
      keepRunning: false,
      dataDir: undefined,
      port: 9094,
      seed: 7,
      out: (t) => {
        out += t;
      },
      color: false,
    });
    const k = "$ kafka-mirrors --bootstrap-server :9094";
    // The CLI's own line for --create names the source and its pinned cluster id (kafka-mirrors.test.ts).
    expect(out).toMatch(
      new RegExp(
        `${esc(k)} --create --mirror primary-to-dr --source-bootstrap primary:9092\\n {3}Created mirror primary-to-dr from primary:9092 \\(source cluster id \\S+\\)\\n`,
      ),
    );
    expect(out).toMatch(
      new RegExp(
        `${esc(k)} --cluster primary --create --mirror dr-to-primary --source-bootstrap dr:9092\\n {3}Created mirror dr-to-primary from dr:9092 \\(source cluster id \\S+\\)\\n`,
      ),
    );
    expect(out).toContain(`${k} --delete --mirror primary-to-dr\n   Deleted mirror primary-to-dr\n`);
    expect(out).toMatch(
      new RegExp(`${esc(k)} --cluster primary --describe --mirror dr-to-primary\\n {3}MIRROR\\s+TOPIC`),
    );
    // Every command line is followed by output, never by another bare command.
    expect(out).not.toMatch(/\$ kafka-mirrors[^\n]*\n {3}\$ /);
  });
});

function esc(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
