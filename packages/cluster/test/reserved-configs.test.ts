import { describe, expect, it } from "vitest";
import { ConfigResourceTypes } from "../src/index";
import { clientCluster, expectKafkaError } from "./clients-helpers";

// `mirror.name` belongs to the mirroring engine (issue 15): a client that sets it would make a fake mirror
// topic, one that deletes it would make a mirrored topic writable behind the mirror's back.
describe("reserved topic configs (mirror.name)", () => {
  it("CreateTopics with mirror.name is refused with INVALID_CONFIG and creates nothing", async () => {
    const { kafka, cluster, run } = clientCluster();
    const admin = kafka.admin();
    await expectKafkaError(
      run(
        admin.createTopics({
          topics: [{ topic: "fake", configEntries: [{ name: "mirror.name", value: "m" }] }],
        }),
      ),
      "INVALID_CONFIG",
    );
    expect(cluster.controller.image.topic("fake")).toBeUndefined();
  });

  it("AlterConfigs may neither set nor delete mirror.name; the legacy replace-all keeps it", async () => {
    const { kafka, cluster, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t" }] }));
    // The engine writes it through the controller, as a mirror's --add does.
    cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "mirror.name", op: "SET", value: "m" },
    ]);
    for (const operation of ["SET", "DELETE"] as const) {
      await expectKafkaError(
        admin.incrementalAlterConfigs({
          resources: [
            {
              type: ConfigResourceTypes.TOPIC,
              name: "t",
              configEntries: [{ name: "mirror.name", value: "other", operation }],
            },
          ],
        }),
        "INVALID_CONFIG",
      );
    }
    await admin.alterConfigs({
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: "t", configEntries: [{ name: "retention.ms", value: "5" }] },
      ],
    });
    expect(Object.fromEntries(cluster.controller.image.topic("t")!.configs)).toEqual({
      "mirror.name": "m",
      "retention.ms": "5",
    });
  });
});
