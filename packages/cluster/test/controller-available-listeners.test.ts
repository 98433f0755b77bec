import { describe, expect, it } from "vitest";
import { type ClusterLogger, Controller, SeededRandom } from "../src/index";
import { testCluster } from "./helpers";

describe("the controller's availability listeners (onAvailable), guarded as its metadata listeners are", () => {
  it("a listener that throws stops neither the others nor the controller's return", () => {
    const errors: { error: unknown; entry: unknown }[] = [];
    const c = new Controller({
      random: new SeededRandom(1),
      onListenerError: (error, entry) => errors.push({ error, entry }),
    });
    const heard: string[] = [];
    c.onAvailable(() => {
      heard.push("first");
      throw new Error("boom");
    });
    c.onAvailable(() => heard.push("second"));
    c.setAvailable(false);
    // Before: the first listener's error came out of setAvailable and the second was never called.
    c.setAvailable(true);
    expect(heard).toEqual(["first", "second"]);
    expect(c.isAvailable).toBe(true);
    expect(errors).toEqual([{ error: new Error("boom"), entry: undefined }]);
  });

  it("a cluster logs the listener's failure as a warning and calls the other listeners", () => {
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger: ClusterLogger = { warn: (fields, message) => warnings.push({ fields, message }) };
    const { cluster } = testCluster({ logger });
    let heard = 0;
    cluster.controller.onAvailable(() => {
      throw new Error("mirror gone");
    });
    cluster.controller.onAvailable(() => heard++);
    cluster.controller.setAvailable(false);
    cluster.controller.setAvailable(true);
    expect(heard).toBe(1);
    expect(warnings).toEqual([
      {
        fields: { event: "controller.available_listener_failed", error: "mirror gone" },
        message:
          "a listener of the controller's return from a failover window failed: mirror gone. The other listeners were still called.",
      },
    ]);
    cluster.close();
  });
});
