/** Randomness, injected so that the same seed gives the same run. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
}

/**
 * A small, fast seeded generator (mulberry32). Not for cryptography: it picks replica placements, jitter and
 * ids in the embedded cluster and the simulator, where reproducibility matters more than secrecy.
 */
export class SeededRandom implements Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, bound). */
  nextInt(bound: number): number {
    return Math.floor(this.next() * bound);
  }
}
