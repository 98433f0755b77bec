import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Cancel,
  ManualClock,
  ManualScheduler,
  type ManualSchedulerOptions,
  SeededRandom,
} from "../src/index";

const SEED = Number(process.env.FC_SEED ?? 20261201);

/**
 * The scheduler as it was before the heap: a linear scan for the earliest due time and a splice of the
 * chosen task. Its order is the contract (seeded simulator runs must replay identically), so the heap
 * version is checked against it.
 */
class ReferenceScheduler {
  private readonly queue: { due: number; seq: number; task: () => void; cancelled: boolean }[] = [];
  private seq = 0;

  constructor(
    private readonly clock: ManualClock,
    private readonly options: ManualSchedulerOptions = {},
  ) {}

  schedule(task: () => void, delayMs = 0): Cancel {
    const entry = { due: this.clock.now() + Math.max(0, delayMs), seq: this.seq++, task, cancelled: false };
    this.queue.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  get pending(): number {
    return this.queue.filter((t) => !t.cancelled).length;
  }

  run(maxMs = 0, maxTasks = 1_000_000): number {
    const until = this.clock.now() + maxMs;
    let ran = 0;
    while (ran < maxTasks) {
      let due = Number.POSITIVE_INFINITY;
      for (let i = this.queue.length - 1; i >= 0; i--) {
        const t = this.queue[i]!;
        if (t.cancelled) this.queue.splice(i, 1);
        else if (t.due <= until && t.due < due) due = t.due;
      }
      if (due === Number.POSITIVE_INFINITY) break;
      const candidates: number[] = [];
      for (let i = 0; i < this.queue.length; i++) if (this.queue[i]!.due === due) candidates.push(i);
      const pick = this.options.choose?.(candidates.length) ?? 0;
      const [task] = this.queue.splice(candidates[pick] ?? candidates[0]!, 1);
      if (task!.due > this.clock.now()) this.clock.advance(task!.due - this.clock.now());
      this.options.onRun?.(task!.due, task!.seq, candidates.length);
      task!.task();
      ran++;
    }
    if (this.clock.now() < until) this.clock.advance(until - this.clock.now());
    return ran;
  }
}

/** What a task does when it runs: schedule children, cancel earlier tasks. */
interface TaskPlan {
  children: number[];
  cancels: number[];
}

type Op =
  | { type: "schedule"; delay: number; plan: TaskPlan }
  | { type: "cancel"; target: number }
  | { type: "run"; maxMs: number; maxTasks: number };

// Few distinct delays, so that many tasks share an instant and the tie-break is exercised.
const delayArb = fc.oneof(fc.constantFrom(0, 0, 5, 10), fc.integer({ min: 0, max: 40 }));
const planArb: fc.Arbitrary<TaskPlan> = fc.record({
  children: fc.array(delayArb, { maxLength: 3 }),
  cancels: fc.array(fc.nat(200), { maxLength: 2 }),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ type: fc.constant("schedule" as const), delay: delayArb, plan: planArb }),
  },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("cancel" as const), target: fc.nat(200) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("run" as const),
      maxMs: fc.integer({ min: 0, max: 30 }),
      maxTasks: fc.integer({ min: 1, max: 50 }),
    }),
  },
);

/**
 * Plays `ops` on a scheduler and returns everything observable: each run (time, submission number, ready
 * count), each `run` call's count, `pending` after each op, and the clock. Child tasks are capped so a
 * program always ends.
 */
function play(
  make: (clock: ManualClock, options: ManualSchedulerOptions) => ReferenceScheduler | ManualScheduler,
  ops: readonly Op[],
  shuffleSeed: number | undefined,
): string[] {
  const clock = new ManualClock(0);
  const out: string[] = [];
  const random = shuffleSeed === undefined ? undefined : new SeededRandom(shuffleSeed);
  const s = make(clock, {
    ...(random ? { choose: (ready: number) => random.nextInt(ready) } : {}),
    onRun: (due, seq, ready) => out.push(`ran ${seq} at ${due} of ${ready}`),
  });
  const cancels: Cancel[] = [];
  let budget = 300;
  const submit = (delay: number, plan: TaskPlan) => {
    const id = cancels.length;
    cancels.push(
      s.schedule(() => {
        out.push(`task ${id} at ${clock.now()}`);
        for (const c of plan.cancels) cancels[c % cancels.length]!();
        for (const d of plan.children) {
          if (budget-- > 0) submit(d, { children: plan.children.slice(1), cancels: [] });
        }
      }, delay),
    );
  };
  for (const op of ops) {
    if (op.type === "schedule") submit(op.delay, op.plan);
    else if (op.type === "cancel") {
      if (cancels.length > 0) cancels[op.target % cancels.length]!();
    } else out.push(`run -> ${s.run(op.maxMs, op.maxTasks)}`);
    out.push(`pending ${s.pending}`);
  }
  out.push(`drain -> ${s.run(1000)} at ${clock.now()} pending ${s.pending}`);
  return out;
}

describe("ManualScheduler", () => {
  it("runs tasks in the same order as the linear-scan reference, with and without a seeded tie-break", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 120 }),
        fc.option(fc.nat(), { nil: undefined }),
        (ops, shuffleSeed) => {
          const expected = play((c, o) => new ReferenceScheduler(c, o), ops, shuffleSeed);
          const actual = play((c, o) => new ManualScheduler(c, o), ops, shuffleSeed);
          expect(actual).toEqual(expected);
        },
      ),
      { seed: SEED, numRuns: 300, verbose: 1 },
    );
  });

  it("keeps submission order among thousands of tasks due at one instant, with cancels in the middle", () => {
    const clock = new ManualClock(0);
    const s = new ManualScheduler(clock);
    const ran: number[] = [];
    const cancels = Array.from({ length: 5000 }, (_, i) => s.schedule(() => ran.push(i), 7));
    for (let i = 0; i < 5000; i += 3) cancels[i]!();
    expect(s.pending).toBe(5000 - 1667);
    expect(s.run(7)).toBe(5000 - 1667);
    expect(ran).toEqual(Array.from({ length: 5000 }, (_, i) => i).filter((i) => i % 3 !== 0));
    expect(s.pending).toBe(0);
  });

  it("a seeded tie-break picks among the live tasks only, and each runs once", () => {
    const clock = new ManualClock(0);
    const random = new SeededRandom(9);
    const readies: number[] = [];
    const s = new ManualScheduler(clock, {
      choose: (n) => random.nextInt(n),
      onRun: (_d, _s, r) => readies.push(r),
    });
    const ran: number[] = [];
    const cancels = Array.from({ length: 200 }, (_, i) => s.schedule(() => ran.push(i)));
    for (let i = 0; i < 200; i += 2) cancels[i]!();
    s.run(0);
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => 2 * i + 1));
    expect(readies).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i));
  });

  it("a task cancelled after it ran, or twice, changes nothing", () => {
    const clock = new ManualClock(0);
    const s = new ManualScheduler(clock);
    const ran: string[] = [];
    const a = s.schedule(() => ran.push("a"), 1);
    s.schedule(() => ran.push("b"), 1);
    s.run(1, 1);
    a();
    a();
    expect(s.pending).toBe(1);
    s.run(1);
    expect(ran).toEqual(["a", "b"]);
  });
});

describe("ManualScheduler.nextDue", () => {
  it("is the earliest live task's due time, skipping cancelled ones, undefined when nothing waits", () => {
    const clock = new ManualClock(100);
    const s = new ManualScheduler(clock);
    expect(s.nextDue).toBeUndefined();
    const early = s.schedule(() => {}, 5);
    s.schedule(() => {}, 30);
    expect(s.nextDue).toBe(105);
    early();
    expect(s.nextDue).toBe(130);
    s.run(s.nextDue! - clock.now());
    expect(clock.now()).toBe(130);
    expect(s.nextDue).toBeUndefined();
  });
});
