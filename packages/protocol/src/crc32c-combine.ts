/**
 * CRC-32C arithmetic that needs no pass over the data: the CRC of a concatenation from the CRCs of its
 * parts (zlib's `crc32_combine`, over GF(2) modulo the Castagnoli polynomial), and a table CRC for a few
 * bytes. With them one native CRC call can check a run of small batches at once: the CRC of the run's bytes
 * must equal the combination of each batch's 21 uncovered header bytes and its stored CRC.
 */

/** The Castagnoli polynomial, bit-reflected. */
const POLY = 0x82f63b78;

/** a(x) * b(x) modulo the polynomial, bit-reflected (zlib's `multmodp`); `a` must not be 0. */
function multiplyModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  let bb = b >>> 0;
  for (;;) {
    if ((a & m) !== 0) {
      p ^= bb;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    bb = bb & 1 ? (bb >>> 1) ^ POLY : bb >>> 1;
  }
  return p >>> 0;
}

/** X2N[k] = x^(2^k) modulo the polynomial. */
const X2N = (() => {
  const table = new Array<number>(32);
  let p = 0x40000000; // x^1
  table[0] = p;
  for (let k = 1; k < 32; k++) {
    p = multiplyModP(p, p);
    table[k] = p;
  }
  return table;
})();

/** x^(8 * bytes) modulo the polynomial: the operator that moves a CRC past `bytes` bytes. */
function shiftOperator(bytes: number): number {
  let p = 0x80000000; // x^0
  let k = 3;
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) {
    if (n % 2 === 1) p = multiplyModP(X2N[k & 31]!, p);
  }
  return p;
}

/**
 * A shift operator, and once its length has come up often, the operator as four 256-entry tables:
 * multiplying a CRC by a fixed operator is linear over GF(2), so it is the XOR of one table entry per
 * byte of the CRC (4 lookups instead of a loop over 32 bits).
 */
interface Shift {
  op: number;
  uses: number;
  table: Int32Array | undefined;
}

/** Uses of one length before its operator gets tables: building them costs about 30 bit-loop multiplies. */
const TABLE_AFTER_USES = 16;

/** Operators by length: runs of batches mostly repeat a few sizes (bounded, dropped when full). */
const operators = new Map<number, Shift>();

function shiftFor(bytes: number): Shift {
  let shift = operators.get(bytes);
  if (shift === undefined) {
    if (operators.size >= 4096) operators.clear();
    shift = { op: shiftOperator(bytes), uses: 0, table: undefined };
    operators.set(bytes, shift);
  }
  return shift;
}

/** The four byte tables of `op`: entry 256 * k + v is op(x) * (v << 8k) modulo the polynomial. */
function operatorTable(op: number): Int32Array {
  const table = new Int32Array(1024);
  for (let k = 0; k < 4; k++) {
    const at = 256 * k;
    for (let bit = 0; bit < 8; bit++) {
      const image = multiplyModP(op, (1 << (8 * k + bit)) >>> 0) | 0;
      const step = 1 << bit;
      // Every byte value with this as its highest bit: the image of the lower bits, plus this bit's.
      for (let v = 0; v < step; v++) table[at + step + v] = table[at + v]! ^ image;
    }
  }
  return table;
}

/** crc * op modulo the polynomial, by table when `shift` has one. */
function applyShift(shift: Shift, crc: number): number {
  let table = shift.table;
  if (table === undefined) {
    if (++shift.uses < TABLE_AFTER_USES) return multiplyModP(shift.op, crc);
    table = operatorTable(shift.op);
    shift.table = table;
  }
  return (
    table[crc & 0xff]! ^
    table[256 + ((crc >>> 8) & 0xff)]! ^
    table[512 + ((crc >>> 16) & 0xff)]! ^
    table[768 + (crc >>> 24)]!
  );
}

/** CRC-32C of A followed by B, from crc(A), crc(B) and B's length, without reading A or B. */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  if (lengthB <= 0) return crcA >>> 0;
  return (applyShift(shiftFor(lengthB), crcA >>> 0) ^ crcB) >>> 0;
}

const TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    table[n] = c;
  }
  return table;
})();

/** CRC-32C of `bytes[start, end)` by table, one byte at a time: for the few bytes of a header. */
export function crc32cOfRange(bytes: Uint8Array, start: number, end: number): number {
  let crc = -1;
  for (let i = start; i < end; i++) crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
