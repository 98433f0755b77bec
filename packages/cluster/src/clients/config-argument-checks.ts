import type { AlterConfigOp } from "../controller";
import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";
import { AlterConfigOpTypes } from "./types";

/** What a config resource carries beside its type and name, by call. */
type ResourceEntries = "configNames" | "configEntries" | "incremental";

/**
 * The `resources` of `admin.describeConfigs`, `alterConfigs` and `incrementalAlterConfigs`, as kafkajs
 * checks them (its messages, then what to pass): `describeConfigs()` and `{ resources: {...} }` failed with
 * a bare TypeError, and a number as a config value with INVALID_REQUEST "value.slice is not a function".
 * The resource type is checked where it is read (TOPIC 2 or BROKER 4).
 */
export function checkConfigResources(args: unknown, where: string, entries: ResourceEntries): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `${where}: ${what}`);
  const resources = (args as { resources?: unknown } | null | undefined)?.resources;
  if (!Array.isArray(resources)) {
    throw refuse(
      `Invalid resources array ${shownValue(resources)}: pass { resources: [{ type: ConfigResourceTypes.TOPIC, name: "orders"${entries === "configNames" ? "" : ", configEntries: [...]"} }] }`,
    );
  }
  if (resources.length === 0) throw refuse("Resources array cannot be empty: name a topic or broker");
  resources.forEach((resource: unknown, index) => {
    if (typeof resource !== "object" || resource === null) {
      throw refuse(
        `resources[${index}] must be an object such as { type: 2, name: "orders" }, got ${shownValue(resource)}`,
      );
    }
    const { name, configNames, configEntries } = resource as Record<string, unknown>;
    if (typeof name !== "string") {
      throw refuse(
        `Invalid resource name ${shownValue(name)} of resources[${index}]: a topic name or broker id, as a string`,
      );
    }
    if (entries === "configNames") {
      if (configNames !== undefined && configNames !== null && !Array.isArray(configNames)) {
        throw refuse(
          `Invalid resource configNames ${shownValue(configNames)} of '${name}': an array such as ["retention.ms"], or leave it out for every config`,
        );
      }
      return;
    }
    if (!Array.isArray(configEntries)) {
      throw refuse(
        `Invalid resource configEntries ${shownValue(configEntries)} of '${name}': an array such as [{ name: "retention.ms", value: "60000"${entries === "incremental" ? ", operation: AlterConfigOpTypes.SET" : ""} }]`,
      );
    }
    configEntries.forEach((entry: unknown, i) => {
      const { name: config, value, operation } = (entry ?? {}) as Record<string, unknown>;
      const valueOk = typeof value === "string" || (entries === "incremental" && value === undefined);
      if (typeof config !== "string" || !valueOk) {
        throw refuse(
          `Invalid resource config value: configEntries[${i}] of '${name}' is ${shownValue(entry)}; a config's name and value are strings, as Kafka's configs are: { name: "retention.ms", value: "60000" }, not 60000`,
        );
      }
      if (entries === "incremental" && alterConfigOpName(operation) === undefined) {
        throw refuse(
          `Invalid operation ${shownValue(operation)} of configEntries[${i}] ('${config}') of '${name}': one of ${OPERATIONS}`,
        );
      }
    });
  });
}

const OPERATIONS = Object.entries(AlterConfigOpTypes)
  .map(([op, id]) => `"${op}" (or AlterConfigOpTypes.${op}, ${id})`)
  .join(", ");

/**
 * An `incrementalAlterConfigs` entry's operation by its name: given as the name ("SET") or as Kafka's
 * `AlterConfigOp.OpType` id (`AlterConfigOpTypes.SET`, 0); undefined for anything else.
 */
export function alterConfigOpName(operation: unknown): AlterConfigOp["op"] | undefined {
  for (const [op, id] of Object.entries(AlterConfigOpTypes) as [AlterConfigOp["op"], number][])
    if (operation === op || operation === id) return op;
  return undefined;
}
