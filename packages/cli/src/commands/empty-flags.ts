import type { Command } from "commander";
import { UsageError } from "./cli-errors";

/**
 * Refuses a flag given an empty (or blank) value, e.g. `--cluster ''` or `--mirror ""` from an unset shell
 * variable: left to the node, an empty `--cluster` silently meant the destination and an empty `--mirror`
 * came back as an HTTP field error. `allowEmpty` names the flags whose empty value means something
 * (`--value ''` is an empty message). Repeatable flags are checked entry by entry.
 */
export function rejectEmptyFlags(command: Command, allowEmpty: ReadonlySet<string>): void {
  const values = command.opts() as Record<string, unknown>;
  for (const option of command.options) {
    const flag = option.long;
    if (flag === undefined || allowEmpty.has(flag)) continue;
    const key = option.attributeName();
    if (command.getOptionValueSource(key) !== "cli") continue;
    const value = values[key];
    const entries = Array.isArray(value) ? value : [value];
    if (entries.some((v) => typeof v === "string" && v.trim() === "")) {
      throw new UsageError(`${flag} is empty: give it a value (${option.flags})`);
    }
  }
}
