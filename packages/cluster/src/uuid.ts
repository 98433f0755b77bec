import type { Random } from "./random";

/** A Kafka topic id: a version-4 UUID in canonical form (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`). */
export type Uuid = string;

/** Kafka's ZERO_UUID: "no topic id". */
export const ZERO_UUID: Uuid = "00000000-0000-0000-0000-000000000000";

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True if `s` is a UUID in canonical lower-case form. */
export function isUuid(s: string): boolean {
  return UUID_PATTERN.test(s);
}

/** A random version-4 UUID drawn from `random` (never the zero UUID). */
export function randomUuid(random: Random): Uuid {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random.next() * 256);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
