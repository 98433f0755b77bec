import { expect } from "vitest";

/** Expects `work` to fail with `errorName` and a message matching `message`. */
export async function expectRefused(
  work: Promise<unknown>,
  errorName: string,
  message: RegExp,
): Promise<void> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e as Error & { errorName?: string },
  );
  expect(error?.errorName, String(error)).toBe(errorName);
  expect(error?.message).toMatch(message);
}

/** The error `make` throws (it must throw: a call that goes through fails the test). */
export function refused(make: () => unknown): Error & { errorName?: string } {
  try {
    make();
  } catch (error) {
    return error as Error & { errorName?: string };
  }
  throw new Error("expected a refusal");
}
