/** One queued task: its due time, submission number and where it sits in its instant's bucket. */
export interface TimerEntry<T> {
  readonly due: number;
  readonly seq: number;
  readonly value: T;
  /** Position in its bucket's `entries` (1-based, as the Fenwick tree counts), -1 once taken or cancelled. */
  index: number;
  bucket: Bucket<T> | undefined;
}

/**
 * The tasks due at one instant, in submission order. A Fenwick tree counts the live ones so that the
 * k-th live task (the simulator's seeded tie-break picks any of them) is found and removed in O(log n)
 * instead of a scan and a splice. Dead slots are dropped once they outnumber the live ones.
 */
class Bucket<T> {
  entries: (TimerEntry<T> | undefined)[] = [];
  /** tree[i] = live entries in (i - lowbit(i), i]; index 0 unused. */
  tree: number[] = [0];
  live = 0;
  /** First slot that may still be live: the FIFO pick (k = 0) skips the consumed prefix in O(1). */
  head = 1;

  constructor(readonly due: number) {}

  push(entry: TimerEntry<T>): void {
    this.entries.push(entry);
    const i = this.entries.length;
    entry.index = i;
    entry.bucket = this;
    // The new node covers (i - lowbit(i), i]: itself plus the nodes that partition the rest of that range.
    let sum = 1;
    const low = i - (i & -i);
    for (let j = i - 1; j > low; j -= j & -j) sum += this.tree[j]!;
    this.tree.push(sum);
    this.live++;
  }

  remove(entry: TimerEntry<T>): void {
    const n = this.entries.length;
    for (let i = entry.index; i <= n; i += i & -i) this.tree[i]!--;
    this.entries[entry.index - 1] = undefined;
    entry.index = -1;
    entry.bucket = undefined;
    this.live--;
    if (this.live === 0) this.reset();
    else if (n - this.live > 32 && n - this.live > this.live) this.compact();
  }

  /** The k-th live entry (0-based), in submission order. */
  at(k: number): TimerEntry<T> {
    if (k === 0) {
      while (this.entries[this.head - 1] === undefined) this.head++;
      return this.entries[this.head - 1]!;
    }
    const n = this.entries.length;
    let pos = 0;
    let rest = k;
    for (let step = 1 << (31 - Math.clz32(n)); step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= n && this.tree[next]! <= rest) {
        pos = next;
        rest -= this.tree[next]!;
      }
    }
    return this.entries[pos]!;
  }

  private reset(): void {
    this.entries = [];
    this.tree = [0];
    this.head = 1;
  }

  /** Keeps the live entries in order and rebuilds the tree in O(n). */
  private compact(): void {
    const kept = this.entries.filter((e): e is TimerEntry<T> => e !== undefined);
    this.entries = kept;
    this.tree = [0, ...kept.map(() => 1)];
    for (let i = 1; i <= kept.length; i++) {
      kept[i - 1]!.index = i;
      const parent = i + (i & -i);
      if (parent <= kept.length) this.tree[parent]! += this.tree[i]!;
    }
    this.head = 1;
  }
}

/**
 * A priority queue of tasks keyed by (due time, submission order) for the manual scheduler: a binary
 * min-heap of the distinct due instants, each with a bucket of its tasks. Adding, cancelling and taking a
 * task cost O(log n), so a simulation of tens of thousands of partitions does not spend its time in the
 * scheduler. Instants whose tasks were all cancelled stay in the heap until they reach the top (or until
 * they are half of it, when the heap is rebuilt without them).
 */
export class TimerQueue<T> {
  private readonly heap: number[] = [];
  private readonly buckets = new Map<number, Bucket<T>>();
  /** Buckets in the heap with no live task. */
  private emptyBuckets = 0;
  /** Tasks whose due time is NaN (a NaN delay): they never run, but count as waiting until cancelled. */
  private readonly neverDue = new Set<TimerEntry<T>>();
  private count = 0;

  /** Live (not taken, not cancelled) tasks. */
  get size(): number {
    return this.count;
  }

  add(due: number, seq: number, value: T): TimerEntry<T> {
    const entry: TimerEntry<T> = { due, seq, value, index: -1, bucket: undefined };
    this.count++;
    if (Number.isNaN(due)) {
      this.neverDue.add(entry);
      return entry;
    }
    let bucket = this.buckets.get(due);
    if (!bucket) {
      bucket = new Bucket(due);
      this.buckets.set(due, bucket);
      this.pushHeap(due);
    } else if (bucket.live === 0) this.emptyBuckets--;
    bucket.push(entry);
    return entry;
  }

  /** Cancels a task; cancelling twice, or after it was taken, does nothing. */
  cancel(entry: TimerEntry<T>): void {
    if (this.neverDue.delete(entry)) {
      this.count--;
      return;
    }
    const bucket = entry.bucket;
    if (!bucket) return;
    bucket.remove(entry);
    this.count--;
    if (bucket.live === 0) {
      this.emptyBuckets++;
      if (this.emptyBuckets > 1024 && this.emptyBuckets * 2 > this.heap.length) this.dropEmptyBuckets();
    }
  }

  /** The earliest instant with a live task, or undefined. */
  nextDue(): number | undefined {
    for (;;) {
      const due = this.heap[0];
      if (due === undefined) return undefined;
      if (this.buckets.get(due)!.live > 0) return due;
      this.popHeap();
      this.buckets.delete(due);
      this.emptyBuckets--;
    }
  }

  /** Live tasks due at `due` (an instant `nextDue` returned). */
  readyAt(due: number): number {
    return this.buckets.get(due)?.live ?? 0;
  }

  /** Removes and returns the k-th live task due at `due`, in submission order. */
  take(due: number, k: number): TimerEntry<T> {
    const bucket = this.buckets.get(due)!;
    const entry = bucket.at(k);
    bucket.remove(entry);
    this.count--;
    if (bucket.live === 0) {
      // It is the heap's top: drop it now rather than leave an empty instant behind.
      this.popHeap();
      this.buckets.delete(due);
    }
    return entry;
  }

  private dropEmptyBuckets(): void {
    const kept: number[] = [];
    for (const due of this.heap) {
      if (this.buckets.get(due)!.live > 0) kept.push(due);
      else this.buckets.delete(due);
    }
    this.heap.length = 0;
    this.emptyBuckets = 0;
    for (const due of kept) this.pushHeap(due);
  }

  private pushHeap(due: number): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(due);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]! <= due) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = due;
  }

  private popHeap(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && heap[right]! < heap[left]! ? right : left;
      if (heap[child]! >= last) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
  }
}
