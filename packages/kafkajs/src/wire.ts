/**
 * Kafka protocol primitives for the requests kafkajs 2.2.4 does not have (Fetch v12, Metadata v12,
 * OffsetsForLeaderEpoch, ListOffsets v5): fixed-width integers, strings, arrays, and the "flexible" forms
 * (KIP-482: unsigned-varint lengths plus one, tagged-field sections). kafkajs carries the bytes (its
 * connection adds the size, api key, version, correlation id and client id).
 */

/** Appends protocol fields to a growing buffer. */
export class Writer {
  private buf = Buffer.allocUnsafe(256);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  int8(v: number): this {
    this.ensure(1);
    this.pos = this.buf.writeInt8(v, this.pos);
    return this;
  }

  int16(v: number): this {
    this.ensure(2);
    this.pos = this.buf.writeInt16BE(v, this.pos);
    return this;
  }

  int32(v: number): this {
    this.ensure(4);
    this.pos = this.buf.writeInt32BE(v, this.pos);
    return this;
  }

  int64(v: bigint): this {
    this.ensure(8);
    this.pos = this.buf.writeBigInt64BE(v, this.pos);
    return this;
  }

  uvarint(v: number): this {
    this.ensure(5);
    let value = v >>> 0;
    while (value >= 0x80) {
      this.buf[this.pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buf[this.pos++] = value;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** Classic STRING: int16 length then UTF-8 (null as -1). */
  string(s: string | null): this {
    if (s === null) return this.int16(-1);
    const b = Buffer.from(s, "utf8");
    return this.int16(b.length).bytes(b);
  }

  /** COMPACT_STRING: uvarint length + 1 then UTF-8 (null as 0). */
  compactString(s: string | null): this {
    if (s === null) return this.uvarint(0);
    const b = Buffer.from(s, "utf8");
    return this.uvarint(b.length + 1).bytes(b);
  }

  /** Classic ARRAY: int32 count, then each item. */
  array<T>(items: readonly T[], write: (w: this, item: T) => void): this {
    this.int32(items.length);
    for (const item of items) write(this, item);
    return this;
  }

  /** COMPACT_ARRAY: uvarint count + 1, then each item (null as 0). */
  compactArray<T>(items: readonly T[] | null, write: (w: this, item: T) => void): this {
    if (items === null) return this.uvarint(0);
    this.uvarint(items.length + 1);
    for (const item of items) write(this, item);
    return this;
  }

  /** An empty tagged-field section (KIP-482). */
  noTags(): this {
    return this.uvarint(0);
  }

  uuid(hex: string): this {
    return this.bytes(uuidToBytes(hex));
  }

  /** The bytes written so far. */
  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Reads protocol fields from a response body; throws a RangeError past its end. */
export class Reader {
  pos = 0;

  constructor(readonly buf: Buffer) {}

  int8(): number {
    const v = this.buf.readInt8(this.pos);
    this.pos += 1;
    return v;
  }

  int16(): number {
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  bool(): boolean {
    return this.int8() !== 0;
  }

  uvarint(): number {
    let value = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length)
        throw new RangeError("unsigned varint runs past the end of the response");
      const b = this.buf[this.pos++]!;
      value |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value >>> 0;
      shift += 7;
      if (shift > 28) throw new RangeError("unsigned varint longer than 5 bytes");
    }
  }

  /** A view of the next `n` bytes (no copy). */
  take(n: number): Buffer {
    if (n < 0 || this.pos + n > this.buf.length)
      throw new RangeError(
        `${n} bytes at ${this.pos} run past the end of a ${this.buf.length}-byte response`,
      );
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  string(): string | null {
    const n = this.int16();
    return n < 0 ? null : this.take(n).toString("utf8");
  }

  compactString(): string | null {
    const n = this.uvarint();
    return n === 0 ? null : this.take(n - 1).toString("utf8");
  }

  array<T>(read: (r: this) => T): T[] {
    const n = this.int32();
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(read(this));
    return out;
  }

  compactArray<T>(read: (r: this) => T): T[] {
    const n = this.uvarint();
    const out: T[] = [];
    for (let i = 0; i < n - 1; i++) out.push(read(this));
    return out;
  }

  /** Skips a tagged-field section; `onTag` sees each field's tag and raw value. */
  tags(onTag?: (tag: number, value: Reader) => void): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      const size = this.uvarint();
      const value = this.take(size);
      onTag?.(tag, new Reader(value));
    }
  }

  uuid(): string {
    return uuidFromBytes(this.take(16));
  }
}

/** Kafka's 16 Uuid bytes as the canonical lower-case hex form the embedded clusters use for topic ids. */
export function uuidFromBytes(b: Uint8Array): string {
  const hex = Buffer.from(b).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The canonical hex form back to Kafka's 16 bytes. */
export function uuidToBytes(hex: string): Buffer {
  const b = Buffer.from(hex.replace(/-/g, ""), "hex");
  if (b.length !== 16) throw new RangeError(`'${hex}' is not a UUID`);
  return b;
}
