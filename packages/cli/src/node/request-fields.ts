import { BadRequestError } from "./http-errors";

/** A request body or query string, as parsed JSON. */
export type Fields = Record<string, unknown>;

/** The body or query as an object (an empty one when absent). */
export function fieldsOf(value: unknown): Fields {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new BadRequestError("the request body must be a JSON object");
  }
  return value as Fields;
}

/** A required non-empty string field. */
export function requiredString(fields: Fields, name: string): string {
  const v = fields[name];
  if (typeof v !== "string" || v === "") {
    throw new BadRequestError(`field '${name}' is required and must be a non-empty string`);
  }
  return v;
}

/** An optional string field. */
export function optionalString(fields: Fields, name: string): string | undefined {
  const v = fields[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new BadRequestError(`field '${name}' must be a string`);
  return v;
}

/** An optional integer field from `min` to `max` (numbers or strings of decimal digits). */
export function optionalInt(
  fields: Fields,
  name: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const v = fields[name];
  if (v === undefined || v === null) return undefined;
  // Decimal digits only: Number() would also take "1e3", "0x10" or " 5 ".
  const n = typeof v === "string" ? (/^-?\d+$/.test(v) ? Number(v) : Number.NaN) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new BadRequestError(
      `field '${name}' must be an integer ${range} (decimal digits), got ${JSON.stringify(v)}`,
    );
  }
  return n;
}

/** An optional boolean field (true/false or "true"/"false"). */
export function optionalBool(fields: Fields, name: string): boolean {
  const v = fields[name];
  if (v === undefined || v === null) return false;
  if (v === true || v === "true") return true;
  if (v === false || v === "false") return false;
  throw new BadRequestError(`field '${name}' must be true or false`);
}

/** An optional object of string values (mirror configs). */
export function stringMap(fields: Fields, name: string): Record<string, string> {
  const v = fields[name];
  if (v === undefined || v === null) return {};
  if (typeof v !== "object" || Array.isArray(v))
    throw new BadRequestError(`field '${name}' must be an object`);
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    if (typeof value !== "string") throw new BadRequestError(`${name}.${k} must be a string`);
    out[k] = value;
  }
  return out;
}

/** An optional list of strings (absent: empty). */
export function stringList(fields: Fields, name: string): string[] {
  const v = fields[name];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string"))
    throw new BadRequestError(`field '${name}' must be a list of strings`);
  return v as string[];
}
