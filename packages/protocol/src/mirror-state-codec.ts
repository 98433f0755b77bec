import { CorruptRecordError, UnsupportedVersionError } from "./errors";

/**
 * Key and value codecs of the `__mirror_state` compacted topic (spec §6), laid out like Kafka's coordinator
 * records and the KIP-1279 POC (`mirror-coordinator/src/main/resources/common/message/`):
 *
 * - key:   `int16 recordType, string MirrorName, uuid TopicId (16 bytes), int32 Partition`. The leading
 *          int16 is the record type, as in Kafka's coordinator records (where it is the key "version"):
 *          1 = LastMirrorEpochs, 2 = MirrorPartitionState (the POC's apiKeys).
 * - value: `int16 version` then the fields of that version; a tombstone is a null value.
 *   - MirrorPartitionState v0: `int8 State, int32 LeaderEpoch, int32 StateEpoch, nullable string
 *     ErrorMessage, int16 RetryAttempt (-1 = non-retryable), int8 PreviousState (-1 = none)`.
 *   - LastMirrorEpochs v0: `int32 LastMirrorEpoch`.
 *
 * Strings are Kafka's classic strings: int16 length (-1 = null) + UTF-8. States are the POC's early
 * `MirrorPartitionState` enum values (PREPARING 0 ... FAILED 7, UNKNOWN 16).
 *
 * Decoding is strict: an unknown record type or value version gives `UnsupportedVersionError` (a loader
 * skips such a record with a warning); truncated, overlong or otherwise malformed bytes give
 * `CorruptRecordError`. Nothing else is thrown.
 */

/** Record types, the leading int16 of a `__mirror_state` key (the POC's apiKeys). */
export const MirrorStateRecordType = {
  LAST_MIRROR_EPOCHS: 1,
  MIRROR_PARTITION_STATE: 2,
} as const;
/** A `__mirror_state` record type id. */
export type MirrorStateRecordType = (typeof MirrorStateRecordType)[keyof typeof MirrorStateRecordType];

/** Which value a `__mirror_state` key points to. */
export type MirrorStateKind = "MirrorPartitionState" | "LastMirrorEpochs";

/** Value versions this code writes (and the highest it reads). */
export const MIRROR_PARTITION_STATE_VALUE_VERSION = 0;
/** Value versions this code writes (and the highest it reads). */
export const LAST_MIRROR_EPOCHS_VALUE_VERSION = 0;

/** A `__mirror_state` key: one partition of one mirrored topic, and which value it holds. */
export interface MirrorStateKey {
  kind: MirrorStateKind;
  mirrorName: string;
  /** The source topic id as a canonical lowercase UUID string, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
  topicId: string;
  partition: number;
}

/** Partition states persisted in `__mirror_state`, with their int8 codes (the POC's early enum). */
export const MirrorPartitionStateCode = {
  PREPARING: 0,
  EPOCH_FENCING: 1,
  MIRRORING: 2,
  PAUSING: 3,
  PAUSED: 4,
  STOPPING: 5,
  STOPPED: 6,
  FAILED: 7,
  UNKNOWN: 16,
} as const;
/** The name of a mirror partition state. */
export type MirrorPartitionStateName = keyof typeof MirrorPartitionStateCode;

/** Every state name, in code order. */
export const MIRROR_PARTITION_STATE_NAMES: readonly MirrorPartitionStateName[] = Object.keys(
  MirrorPartitionStateCode,
) as MirrorPartitionStateName[];

const STATE_BY_CODE = new Map<number, MirrorPartitionStateName>(
  MIRROR_PARTITION_STATE_NAMES.map((n) => [MirrorPartitionStateCode[n], n]),
);

/** `RetryAttempt` of a FAILED partition that must not be retried. */
export const NON_RETRYABLE_ATTEMPT = -1;

/** The complete state of one mirrored partition (not a delta). */
export interface MirrorPartitionStateValue {
  state: MirrorPartitionStateName;
  /** Highest leader epoch seen (-1 = none). */
  leaderEpoch: number;
  /** Monotonic, +1 per transition. */
  stateEpoch: number;
  errorMessage: string | null;
  /** Retry count of a FAILED partition; -1 (`NON_RETRYABLE_ATTEMPT`) = non-retryable. int16. */
  retryAttempt: number;
  /** State before FAILED, used for a retry; null if none. */
  previousState: MirrorPartitionStateName | null;
}

/** The last mirror epoch (LME) recorded for a partition when it failed over. */
export interface LastMirrorEpochsValue {
  lastMirrorEpoch: number;
}

/** A decoded `__mirror_state` record; `value` null is a tombstone. */
export type MirrorStateRecord =
  | { key: MirrorStateKey & { kind: "MirrorPartitionState" }; value: MirrorPartitionStateValue | null }
  | { key: MirrorStateKey & { kind: "LastMirrorEpochs" }; value: LastMirrorEpochsValue | null };

// ---------------------------------------------------------------------------------------------------------
// Topic ids

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 16 bytes of a canonical UUID string. Throws `RangeError` for anything else. */
export function topicIdToBytes(topicId: string): Buffer {
  if (!UUID_RE.test(topicId)) throw new RangeError(`topic id '${topicId}' is not a canonical UUID string`);
  return Buffer.from(topicId.replaceAll("-", ""), "hex");
}

/** The canonical lowercase UUID string of 16 bytes. Throws `RangeError` if not given 16 bytes. */
export function topicIdFromBytes(bytes: Uint8Array): string {
  if (bytes.length !== 16) throw new RangeError(`a topic id is 16 bytes, got ${bytes.length}`);
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, 16).toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Kafka's printed form of a topic id (`Uuid.toString()`: URL-safe base64 without padding, 22 characters). */
export function topicIdToBase64(topicId: string): string {
  return topicIdToBytes(topicId).toString("base64url");
}

/** The canonical UUID string of Kafka's base64 topic id form. Throws `RangeError` if it is not 16 bytes. */
export function topicIdFromBase64(base64: string): string {
  if (!/^[A-Za-z0-9_-]{22}$/.test(base64)) {
    throw new RangeError(`'${base64}' is not a 22-character URL-safe base64 topic id`);
  }
  return topicIdFromBytes(Buffer.from(base64, "base64url"));
}

// ---------------------------------------------------------------------------------------------------------
// Writing

function stringBytes(s: string | null, field: string): Buffer | null {
  if (s === null) return null;
  const b = Buffer.from(s, "utf8");
  if (b.length > 0x7fff) throw new RangeError(`${field} is ${b.length} bytes, more than 32767`);
  return b;
}

function checkInt(value: number, bits: 8 | 16 | 32, field: string): void {
  const max = 2 ** (bits - 1);
  if (!Number.isInteger(value) || value < -max || value >= max) {
    throw new RangeError(`${field} ${value} is not an int${bits}`);
  }
}

function stateCode(name: string, field: string): number {
  if (!Object.hasOwn(MirrorPartitionStateCode, name)) throw new RangeError(`unknown ${field} '${name}'`);
  return MirrorPartitionStateCode[name as MirrorPartitionStateName];
}

/** Writes a `__mirror_state` key. Throws `RangeError` for a malformed topic id or out-of-range field. */
export function encodeMirrorStateKey(key: MirrorStateKey): Buffer {
  const name = stringBytes(key.mirrorName, "mirror name");
  if (name === null) throw new RangeError("mirror name must not be null");
  const topicId = topicIdToBytes(key.topicId);
  checkInt(key.partition, 32, "partition");
  const type =
    key.kind === "MirrorPartitionState"
      ? MirrorStateRecordType.MIRROR_PARTITION_STATE
      : MirrorStateRecordType.LAST_MIRROR_EPOCHS;
  const buf = Buffer.allocUnsafe(2 + 2 + name.length + 16 + 4);
  let o = buf.writeInt16BE(type, 0);
  o = buf.writeInt16BE(name.length, o);
  o += name.copy(buf, o);
  o += topicId.copy(buf, o);
  buf.writeInt32BE(key.partition, o);
  return buf;
}

/** Writes a MirrorPartitionState value (version 0). Throws `RangeError` for an out-of-range field. */
export function encodeMirrorPartitionStateValue(value: MirrorPartitionStateValue): Buffer {
  const state = stateCode(value.state, "state");
  const previous = value.previousState === null ? -1 : stateCode(value.previousState, "previous state");
  checkInt(value.leaderEpoch, 32, "leader epoch");
  checkInt(value.stateEpoch, 32, "state epoch");
  checkInt(value.retryAttempt, 16, "retry attempt");
  const message = stringBytes(value.errorMessage, "error message");
  const buf = Buffer.allocUnsafe(2 + 1 + 4 + 4 + 2 + (message?.length ?? 0) + 2 + 1);
  let o = buf.writeInt16BE(MIRROR_PARTITION_STATE_VALUE_VERSION, 0);
  o = buf.writeInt8(state, o);
  o = buf.writeInt32BE(value.leaderEpoch, o);
  o = buf.writeInt32BE(value.stateEpoch, o);
  o = buf.writeInt16BE(message === null ? -1 : message.length, o);
  if (message !== null) o += message.copy(buf, o);
  o = buf.writeInt16BE(value.retryAttempt, o);
  buf.writeInt8(previous, o);
  return buf;
}

/** Writes a LastMirrorEpochs value (version 0). Throws `RangeError` for an out-of-range epoch. */
export function encodeLastMirrorEpochsValue(value: LastMirrorEpochsValue): Buffer {
  checkInt(value.lastMirrorEpoch, 32, "last mirror epoch");
  const buf = Buffer.allocUnsafe(6);
  buf.writeInt16BE(LAST_MIRROR_EPOCHS_VALUE_VERSION, 0);
  buf.writeInt32BE(value.lastMirrorEpoch, 2);
  return buf;
}

/** Writes a whole record: the key and its value, or null for a tombstone. */
export function encodeMirrorStateRecord(record: MirrorStateRecord): { key: Buffer; value: Buffer | null } {
  const key = encodeMirrorStateKey(record.key);
  if (record.value === null) return { key, value: null };
  return {
    key,
    value:
      record.key.kind === "MirrorPartitionState"
        ? encodeMirrorPartitionStateValue(record.value as MirrorPartitionStateValue)
        : encodeLastMirrorEpochsValue(record.value as LastMirrorEpochsValue),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Reading

/** A bounds-checked reader: every read past the end is a `CorruptRecordError`. */
class Reader {
  private o = 0;
  constructor(
    private readonly buf: Buffer,
    private readonly what: string,
  ) {}

  private need(n: number, field: string): number {
    const at = this.o;
    if (at + n > this.buf.length) {
      throw new CorruptRecordError(
        `${this.what} is cut off: ${field} needs ${n} bytes at byte ${at}, ${this.buf.length - at} remain`,
      );
    }
    this.o += n;
    return at;
  }
  int8(field: string): number {
    return this.buf.readInt8(this.need(1, field));
  }
  int16(field: string): number {
    return this.buf.readInt16BE(this.need(2, field));
  }
  int32(field: string): number {
    return this.buf.readInt32BE(this.need(4, field));
  }
  bytes(n: number, field: string): Buffer {
    const at = this.need(n, field);
    return this.buf.subarray(at, at + n);
  }
  nullableString(field: string): string | null {
    const len = this.int16(`${field} length`);
    if (len === -1) return null;
    if (len < -1) throw new CorruptRecordError(`${this.what}: ${field} has length ${len}`);
    return this.bytes(len, field).toString("utf8");
  }
  string(field: string): string {
    const s = this.nullableString(field);
    if (s === null) throw new CorruptRecordError(`${this.what}: ${field} is null`);
    return s;
  }
  end(): void {
    if (this.o !== this.buf.length) {
      throw new CorruptRecordError(`${this.what} has ${this.buf.length - this.o} bytes after its last field`);
    }
  }
}

function requireBuffer(buf: unknown, what: string): Buffer {
  if (!Buffer.isBuffer(buf)) throw new CorruptRecordError(`${what} is not a Buffer`);
  return buf;
}

/** Reads a `__mirror_state` key. Unknown record type: `UnsupportedVersionError`; malformed: `CorruptRecordError`. */
export function decodeMirrorStateKey(buf: Buffer): MirrorStateKey {
  const r = new Reader(requireBuffer(buf, "__mirror_state key"), "__mirror_state key");
  const type = r.int16("record type");
  let kind: MirrorStateKind;
  if (type === MirrorStateRecordType.MIRROR_PARTITION_STATE) kind = "MirrorPartitionState";
  else if (type === MirrorStateRecordType.LAST_MIRROR_EPOCHS) kind = "LastMirrorEpochs";
  else if (type < 0) throw new CorruptRecordError(`__mirror_state key has a negative record type ${type}`);
  else throw new UnsupportedVersionError(`__mirror_state key has unknown record type ${type}`);
  const mirrorName = r.string("mirror name");
  const topicId = topicIdFromBytes(r.bytes(16, "topic id"));
  const partition = r.int32("partition");
  r.end();
  return { kind, mirrorName, topicId, partition };
}

function valueVersion(r: Reader, what: string, highest: number): number {
  const version = r.int16("version");
  if (version < 0) throw new CorruptRecordError(`${what} has a negative version ${version}`);
  if (version > highest) {
    throw new UnsupportedVersionError(`${what} has version ${version}; this reader knows up to ${highest}`);
  }
  return version;
}

function stateOf(code: number, what: string, field: string): MirrorPartitionStateName {
  const name = STATE_BY_CODE.get(code);
  if (name === undefined) throw new CorruptRecordError(`${what} has an unknown ${field} code ${code}`);
  return name;
}

/** Reads a MirrorPartitionState value. Unknown version: `UnsupportedVersionError`; malformed: `CorruptRecordError`. */
export function decodeMirrorPartitionStateValue(buf: Buffer): MirrorPartitionStateValue {
  const what = "MirrorPartitionState value";
  const r = new Reader(requireBuffer(buf, what), what);
  valueVersion(r, what, MIRROR_PARTITION_STATE_VALUE_VERSION);
  const state = stateOf(r.int8("state"), what, "state");
  const leaderEpoch = r.int32("leader epoch");
  const stateEpoch = r.int32("state epoch");
  const errorMessage = r.nullableString("error message");
  const retryAttempt = r.int16("retry attempt");
  const previousCode = r.int8("previous state");
  const previousState = previousCode === -1 ? null : stateOf(previousCode, what, "previous state");
  r.end();
  return { state, leaderEpoch, stateEpoch, errorMessage, retryAttempt, previousState };
}

/** Reads a LastMirrorEpochs value. Unknown version: `UnsupportedVersionError`; malformed: `CorruptRecordError`. */
export function decodeLastMirrorEpochsValue(buf: Buffer): LastMirrorEpochsValue {
  const what = "LastMirrorEpochs value";
  const r = new Reader(requireBuffer(buf, what), what);
  valueVersion(r, what, LAST_MIRROR_EPOCHS_VALUE_VERSION);
  const lastMirrorEpoch = r.int32("last mirror epoch");
  r.end();
  return { lastMirrorEpoch };
}

/**
 * Reads a whole `__mirror_state` record (a null value is a tombstone). Throws `UnsupportedVersionError` for
 * an unknown record type or value version (skip the record and warn), `CorruptRecordError` for malformed
 * bytes; nothing else.
 */
export function decodeMirrorStateRecord(key: Buffer, value: Buffer | null): MirrorStateRecord {
  const k = decodeMirrorStateKey(key);
  if (k.kind === "MirrorPartitionState") {
    return {
      key: { ...k, kind: "MirrorPartitionState" },
      value: value === null ? null : decodeMirrorPartitionStateValue(value),
    };
  }
  return {
    key: { ...k, kind: "LastMirrorEpochs" },
    value: value === null ? null : decodeLastMirrorEpochsValue(value),
  };
}
