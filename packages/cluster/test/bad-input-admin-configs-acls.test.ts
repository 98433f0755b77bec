import { describe, expect, it } from "vitest";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  AlterConfigOpTypes,
  ConfigResourceTypes,
  ResourcePatternTypes,
} from "../src/index";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

const ANY_FILTER = {
  resourceType: AclResourceTypes.ANY,
  resourcePatternType: ResourcePatternTypes.ANY,
  operation: AclOperationTypes.ANY,
  permissionType: AclPermissionTypes.ANY,
};

describe("the admin client's config and ACL calls refuse arguments of the wrong shape, as kafkajs does", () => {
  it("describeConfigs, alterConfigs and incrementalAlterConfigs without resources or with a number as a value say what to pass", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    // "Cannot read properties of undefined (reading 'resources')" before.
    await expectRefused(
      run(admin.describeConfigs(undefined as never)),
      "INVALID_REQUEST",
      /^admin.describeConfigs\(args\): Invalid resources array undefined: pass \{ resources: \[\{ type: ConfigResourceTypes.TOPIC, name: "orders" \}\] \}/,
    );
    await expectRefused(
      run(admin.describeConfigs({ resources: [] })),
      "INVALID_REQUEST",
      /Resources array cannot be empty/,
    );
    // INVALID_REQUEST "value.slice is not a function" before.
    await expectRefused(
      run(
        admin.alterConfigs({
          resources: [
            {
              type: ConfigResourceTypes.TOPIC,
              name: "t",
              configEntries: [{ name: "retention.ms", value: 60000 as unknown as string }],
            },
          ],
        }),
      ),
      "INVALID_REQUEST",
      /^admin.alterConfigs\(args\): Invalid resource config value: configEntries\[0\] of 't' is .*a config's name and value are strings, as Kafka's configs are: \{ name: "retention.ms", value: "60000" \}, not 60000/,
    );
    // "Cannot read properties of undefined (reading 'map')" before.
    await expectRefused(
      run(
        admin.incrementalAlterConfigs({
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "t" }],
        } as never),
      ),
      "INVALID_REQUEST",
      /^admin.incrementalAlterConfigs\(args\): Invalid resource configEntries undefined of 't': an array such as/,
    );
    // Nothing changed; good arguments still work, a DELETE without a value included.
    const retention = async () => {
      const described = await run(
        admin.describeConfigs({
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "t", configNames: ["retention.ms"] }],
        }),
      );
      return described.resources[0]?.configEntries[0]?.configValue;
    };
    const before = await retention();
    await run(
      admin.alterConfigs({
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: "t",
            configEntries: [{ name: "retention.ms", value: "60000" }],
          },
        ],
      }),
    );
    expect(await retention()).toBe("60000");
    await run(
      admin.incrementalAlterConfigs({
        resources: [
          {
            type: ConfigResourceTypes.TOPIC,
            name: "t",
            configEntries: [{ name: "retention.ms", operation: "DELETE" }],
          },
        ],
      }),
    );
    expect(await retention()).toBe(before);
  });

  it("incrementalAlterConfigs takes an operation by name or Kafka's id, and names the operations for anything else", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const alter = (configEntries: { name: string; value?: string; operation?: unknown }[]) =>
      run(
        admin.incrementalAlterConfigs({
          resources: [{ type: ConfigResourceTypes.TOPIC, name: "t", configEntries: configEntries as never }],
        }),
      );
    const configs = () => Object.fromEntries(cluster.controller.image.topic("t")!.configs);
    const operations =
      /one of "SET" \(or AlterConfigOpTypes.SET, 0\), "DELETE" \(or AlterConfigOpTypes.DELETE, 1\), "APPEND" \(or AlterConfigOpTypes.APPEND, 2\), "SUBTRACT" \(or AlterConfigOpTypes.SUBTRACT, 3\)$/;
    // Read "config op 1 on 'retention.ms' needs a value" before; with a value, 1 was taken for SUBTRACT.
    await expectRefused(
      alter([{ name: "retention.ms", operation: 7 }]),
      "INVALID_REQUEST",
      new RegExp(
        `^admin.incrementalAlterConfigs\\(args\\): Invalid operation 7 of configEntries\\[0\\] \\('retention.ms'\\) of 't': ${operations.source}`,
      ),
    );
    await expectRefused(
      alter([{ name: "retention.ms", value: "1", operation: "set" }]),
      "INVALID_REQUEST",
      operations,
    );
    await expectRefused(
      alter([{ name: "retention.ms", value: "1" }]),
      "INVALID_REQUEST",
      /Invalid operation undefined/,
    );
    expect(configs()).toEqual({});
    // Kafka's ids (AlterConfigOp.OpType) and the names both work.
    await alter([
      { name: "retention.ms", value: "60000", operation: AlterConfigOpTypes.SET },
      { name: "cleanup.policy", value: "compact", operation: AlterConfigOpTypes.APPEND },
    ]);
    expect(configs()).toEqual({ "retention.ms": "60000", "cleanup.policy": "delete,compact" });
    await alter([
      { name: "retention.ms", operation: AlterConfigOpTypes.DELETE },
      { name: "cleanup.policy", value: "delete", operation: 3 },
    ]);
    expect(configs()).toEqual({ "cleanup.policy": "compact" });
    await alter([{ name: "cleanup.policy", value: "delete", operation: "SET" }]);
    expect(configs()).toEqual({ "cleanup.policy": "delete" });
    // A SET by id without a value names the operation.
    await expectRefused(
      alter([{ name: "retention.ms", operation: AlterConfigOpTypes.SET }]),
      "INVALID_REQUEST",
      /^config op SET on 'retention.ms' needs a value/,
    );
  });

  it("createAcls, describeAcls and deleteAcls without their ACLs, or an ACL without a host, say what to pass", async () => {
    const { run, as } = clientCluster({ authorizer: { enabled: true, superUsers: ["User:admin"] } });
    const admin = as({ principal: "User:admin" }).admin();
    const acl = {
      resourceType: AclResourceTypes.TOPIC,
      resourceName: "orders",
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: "User:alice",
      operation: AclOperationTypes.READ,
      permissionType: AclPermissionTypes.ALLOW,
    };
    // Stored before as a rule with no host (described without one).
    await expectRefused(
      run(admin.createAcls({ acl: [acl] } as never)),
      "INVALID_REQUEST",
      /^admin.createAcls\(args\): Invalid ACL array, the hosts have to be a valid string: acl\[0\].host is undefined \(use "\*" for any host\)/,
    );
    // Bare TypeErrors before.
    await expectRefused(
      run(admin.createAcls(undefined as never)),
      "INVALID_REQUEST",
      /Invalid ACL array undefined: pass \{ acl: \[/,
    );
    await expectRefused(
      run(admin.describeAcls(undefined as never)),
      "INVALID_REQUEST",
      /^admin.describeAcls\(filter\): an ACL filter is an object such as/,
    );
    await expectRefused(
      run(admin.deleteAcls({} as never)),
      "INVALID_REQUEST",
      /^admin.deleteAcls\(args\): Invalid ACL Filter array undefined/,
    );
    await expectRefused(
      run(admin.deleteAcls({ filters: [{ ...ANY_FILTER, principal: 7 }] } as never)),
      "INVALID_REQUEST",
      /filters\[0\]: Invalid principal, the principal have to be a valid string \(or left out to match any\), got 7/,
    );
    expect((await run(admin.describeAcls(ANY_FILTER))).resources).toEqual([]);
    await run(admin.createAcls({ acl: [{ ...acl, host: "*" }] }));
    expect((await run(admin.describeAcls(ANY_FILTER))).resources).toHaveLength(1);
  });
});
