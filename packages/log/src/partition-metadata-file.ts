/** Kafka's per-partition file that names the topic id the directory belongs to. */
export const PARTITION_METADATA_FILE = "partition.metadata";

/** The version of `partition.metadata` this code writes (Kafka's only one). */
export const PARTITION_METADATA_VERSION = 0;

/**
 * Kafka's `Uuid.toString()`: the 16 bytes in URL-safe base64 without padding (22 characters), from a
 * canonical UUID (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`). RangeError on anything else.
 */
export function kafkaUuidString(uuid: string): string {
  const hex = uuid.replace(/-/g, "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) {
    throw new RangeError(`'${uuid}' is not a canonical UUID (8-4-4-4-12 hex digits)`);
  }
  return Buffer.from(hex, "hex").toString("base64url");
}

/** The canonical UUID of Kafka's base64 form (the inverse of {@link kafkaUuidString}). */
export function uuidOfKafkaString(value: string): string {
  const bytes = Buffer.from(value, "base64url");
  if (bytes.length !== 16 || kafkaUuidString(canonical(bytes)) !== value) {
    throw new RangeError(`'${value}' is not a Kafka topic id (22 characters of URL-safe base64)`);
  }
  return canonical(bytes);
}

function canonical(bytes: Buffer): string {
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The file's text for a topic id (canonical UUID): `version: 0\ntopic_id: <base64>`, as Kafka writes it. */
export function formatPartitionMetadata(topicId: string): string {
  return `version: ${PARTITION_METADATA_VERSION}\ntopic_id: ${kafkaUuidString(topicId)}`;
}

/**
 * The topic id (canonical UUID) a `partition.metadata` text names; RangeError naming the problem when it
 * is not Kafka's format (version 0, a `topic_id` line).
 */
export function parsePartitionMetadata(text: string): string {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const at = line.indexOf(": ");
    if (at < 0) throw new RangeError(`${PARTITION_METADATA_FILE}: malformed line '${line}'`);
    fields.set(line.slice(0, at).trim(), line.slice(at + 2).trim());
  }
  if (fields.get("version") !== String(PARTITION_METADATA_VERSION)) {
    throw new RangeError(
      `${PARTITION_METADATA_FILE}: unsupported version '${fields.get("version") ?? "(missing)"}'`,
    );
  }
  const id = fields.get("topic_id");
  if (id === undefined) throw new RangeError(`${PARTITION_METADATA_FILE}: no topic_id line`);
  return uuidOfKafkaString(id);
}
