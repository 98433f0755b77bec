/** The topic config (and dynamic broker config, of the same name) that allows unclean leader elections. */
export const UNCLEAN_LEADER_ELECTION_CONFIG = "unclean.leader.election.enable";

/**
 * Whether a topic's leaderless partitions may elect an out-of-sync replica: the topic's own
 * `unclean.leader.election.enable`, else the cluster-wide dynamic broker default (`kafka-configs
 * --entity-type brokers --entity-default`), else false. Kafka's controller resolves it the same way
 * (`ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic`: topic, dynamic broker, dynamic
 * cluster default, static config) and reads it as Java's `Boolean.parseBoolean`.
 */
export function uncleanElectionEnabled(
  topicConfigs: ReadonlyMap<string, string>,
  clusterDefaults: ReadonlyMap<string, string> | undefined,
): boolean {
  const value =
    topicConfigs.get(UNCLEAN_LEADER_ELECTION_CONFIG) ?? clusterDefaults?.get(UNCLEAN_LEADER_ELECTION_CONFIG);
  return value?.trim().toLowerCase() === "true";
}
