import { describe, expect, it } from "vitest";
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
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
