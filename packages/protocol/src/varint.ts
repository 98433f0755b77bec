import { CorruptRecordError } from "./errors";

/**
 * Zig-zag variable-length integers as Kafka's `ByteUtils` writes them (protobuf style): varint for int32,
 * varlong for int64.
 */

/** Bytes needed to write `value` as a zig-zag varint. */
export function sizeOfVarint(value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  let bytes = 1;
  while (v >= 0x80) {
    v >>>= 7;
    bytes++;
  }
  return bytes;
}

/** Writes `value` as a zig-zag varint at `offset`; returns the offset after it. */
export function writeVarint(buf: Buffer, offset: number, value: number): number {
  let v = ((value << 1) ^ (value >> 31)) >>> 0;
  while (v >= 0x80) {
    buf[offset++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[offset++] = v;
  return offset;
}

/** A decoded number and the offset after it. */
export interface Decoded<T> {
  value: T;
  next: number;
}

/** Reads a zig-zag varint; throws `CorruptRecordError` if it runs past `end` or is longer than 5 bytes. */
export function readVarint(buf: Buffer, offset: number, end: number = buf.length): Decoded<number> {
  let raw = 0;
  let shift = 0;
  let i = offset;
  for (;;) {
    if (i >= end) throw new CorruptRecordError(`varint at byte ${offset} runs past the end of the data`);
    const b = buf[i++]!;
    if (shift === 28 && b > 0x0f)
      throw new CorruptRecordError(`varint at byte ${offset} is longer than 5 bytes`);
    raw |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  raw >>>= 0;
  return { value: (raw >>> 1) ^ -(raw & 1), next: i };
}

const MASK64 = (1n << 64n) - 1n;

/** Bytes needed to write `value` as a zig-zag varlong. */
export function sizeOfVarlong(value: bigint): number {
  let v = ((value << 1n) ^ (value >> 63n)) & MASK64;
  let bytes = 1;
  while (v >= 0x80n) {
    v >>= 7n;
    bytes++;
  }
  return bytes;
}

/** Writes `value` as a zig-zag varlong at `offset`; returns the offset after it. */
export function writeVarlong(buf: Buffer, offset: number, value: bigint): number {
  let v = ((value << 1n) ^ (value >> 63n)) & MASK64;
  while (v >= 0x80n) {
    buf[offset++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  buf[offset++] = Number(v);
  return offset;
}

/** Reads a zig-zag varlong; throws `CorruptRecordError` if it runs past `end` or is longer than 10 bytes. */
export function readVarlong(buf: Buffer, offset: number, end: number = buf.length): Decoded<bigint> {
  let raw = 0n;
  let shift = 0n;
  let i = offset;
  for (;;) {
    if (i >= end) throw new CorruptRecordError(`varlong at byte ${offset} runs past the end of the data`);
    if (shift > 63n) throw new CorruptRecordError(`varlong at byte ${offset} is longer than 10 bytes`);
    const b = buf[i++]!;
    raw |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7n;
  }
  raw &= MASK64;
  return { value: (raw >> 1n) ^ -(raw & 1n), next: i };
}
