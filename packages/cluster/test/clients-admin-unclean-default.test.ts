import { describe, expect, it } from "vitest";
import { ConfigResourceTypes } from "../src/index";
import { clientCluster } from "./clients-helpers";

describe("DescribeConfigs of a topic's unclean.leader.election.enable", () => {
  it("shows the cluster-wide broker default the controller elects by, under the topic's own value", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "inherits" }, { topic: "own" }] }));
    await run(
      admin.incrementalAlterConfigs({
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: "own",
            configEntries: [{ name: "unclean.leader.election.enable", value: "false", operation: "SET" }],
          },
          {
            type: ConfigResourceTypes.BROKER,
            name: "",
            configEntries: [{ name: "unclean.leader.election.enable", value: "true", operation: "SET" }],
          },
        ],
      }),
    );
    const describe = async (topic: string) => {
      const { resources } = await run(
        admin.describeConfigs({
          resources: [
            { type: ConfigResourceTypes.TOPIC, name: topic, configNames: ["unclean.leader.election.enable"] },
          ],
          includeSynonyms: true,
        }),
      );
      const e = resources[0]!.configEntries[0]!;
      return {
        value: e.configValue,
        isDefault: e.isDefault,
        source: e.configSource,
        synonyms: e.configSynonyms.map((s) => [s.configValue, s.configSource]),
      };
    };
    // As Kafka describes it: 3 is DYNAMIC_DEFAULT_BROKER_CONFIG, 1 TOPIC_CONFIG, 5 DEFAULT_CONFIG.
    expect(await describe("inherits")).toEqual({
      value: "true",
      isDefault: false,
      source: 3,
      synonyms: [
        ["true", 3],
        ["false", 5],
      ],
    });
    expect(await describe("own")).toEqual({
      value: "false",
      isDefault: false,
      source: 1,
      synonyms: [
        ["false", 1],
        ["true", 3],
        ["false", 5],
      ],
    });
    expect(cluster.controller.image.topic("inherits")?.configs.has("unclean.leader.election.enable")).toBe(
      false,
    );
  });
});
