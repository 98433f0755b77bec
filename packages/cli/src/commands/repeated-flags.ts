import type { Command } from "commander";
import { UsageError } from "./cli-errors";

/**
 * Refuses a single-value flag given more than once (`--mirror a --mirror b`): commander keeps the last
 * value without a word, so a command would act on `b` while the user also asked for `a`. Kafka's own
 * tools refuse it too. Repeatable flags (those collecting into a list, default `[]`) and switches (no
 * value) may repeat. `argv` is what the program was given; flags after `--` are not flags.
 */
export function rejectRepeatedFlags(command: Command, argv: readonly string[]): void {
  const end = argv.indexOf("--");
  const tokens = end < 0 ? argv : argv.slice(0, end);
  for (const option of command.options) {
    if (Array.isArray(option.defaultValue) || !(option.required || option.optional)) continue;
    const names = [option.long, option.short].filter((n): n is string => n !== undefined);
    const given = tokens.filter((t) => names.some((n) => t === n || t.startsWith(`${n}=`)));
    if (given.length > 1) {
      throw new UsageError(
        `${option.long ?? option.short} is given ${given.length} times; it takes one value (${option.flags}): give it once`,
      );
    }
  }
}
