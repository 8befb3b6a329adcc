// How many body bytes may be read and parsed at once (docs/design.md §4 "Bounds").
// A 7 MiB review costs a few times its size while it is parsed and reviewed
// (bench scenario 9, BENCHMARKS.md: a burst of them unbudgeted goes over the chart's 256Mi), so a
// burst of them waits for budget before its body is read: the bytes stay in the
// client's socket meanwhile. A request is let in whenever its bytes fit, not in
// arrival order; a large one that waits past the arrival limit is cut off (408).
//
// A caller that declares large lengths and trickles its bodies holds its bytes
// until the arrival limit cuts it, and can come back at once: so small bodies,
// the size of every review the apiserver sends but the rarest, have a share of
// their own that no large body can take, and a large one is refused at once
// rather than queued when it can never fit, or when its address already holds
// its bound. Each share, and each address's bound in it, is a pool of Slots, one a byte.

import { Slots } from '../runtime/index.js';

interface BodyBudgetSizes {
  /** A body of at most this many bytes is small: it takes only from the small share. */
  readonly smallBodyBytes: number;
  readonly smallShare: number;
  /** Small bytes one address may hold or wait for at once. */
  readonly smallPerAddress: number;
  readonly largeShare: number;
  /** Large bytes one address may hold or wait for at once. */
  readonly largePerAddress: number;
}

/** Answered at once, body unread: the request can never fit, or its address holds its bound. */
export interface Refusal {
  readonly refused: 413 | 503;
  readonly error: string;
}

/** A place in a share: `granted` true (at once or later) means `release()` is owed, once. */
export interface Ticket {
  readonly refused?: undefined;
  readonly granted: boolean | Promise<boolean>;
  release(): void;
}

/**
 * The bytes each client address holds or waits for in one share, bounded: one pool of Slots
 * per address that holds any (dropped when it holds nothing, so addresses cost nothing idle).
 */
class AddressBounds {
  readonly #addresses = new Map<string, Slots>();

  constructor(readonly perAddress: number) {}

  /** Takes `bytes` for `address` now: the function that gives them back, or undefined. */
  tryTake(address: string, bytes: number): (() => void) | undefined {
    const own = this.#addresses.get(address) ?? new Slots(this.perAddress);
    if (!own.tryTake(bytes)) return undefined;
    this.#addresses.set(address, own);
    return () => {
      own.release(bytes);
      if (own.inUse === 0) this.#addresses.delete(address);
    };
  }

  heldBy(address: string): number {
    return this.#addresses.get(address)?.inUse ?? 0;
  }

  get size(): number {
    return this.#addresses.size;
  }
}

interface Lane {
  readonly name: 'small' | 'large';
  readonly share: Slots;
  readonly bounds: AddressBounds;
}

/**
 * The two shares, each with its bound per address: which share a body takes from, and
 * whether it may wait for it at all.
 */
export class BodyBudgets {
  readonly #small: Lane;
  readonly #large: Lane;

  constructor(readonly sizes: BodyBudgetSizes) {
    this.#small = lane('small', sizes.smallShare, sizes.smallPerAddress);
    this.#large = lane('large', sizes.largeShare, sizes.largePerAddress);
  }

  /** Large bytes `address` holds or waits for. */
  heldBy(address: string): number {
    return this.#large.bounds.heldBy(address);
  }

  /** How many addresses hold or wait for large bytes: the only ones remembered. */
  get addresses(): number {
    return this.#large.bounds.size;
  }

  /**
   * `waitUntil` gives the signal that ends a wait: asked for only when the body must wait,
   * so the reviews let in at once, nearly all of them, make no AbortController.
   */
  admit(bytes: number, address: string, waitUntil: () => AbortSignal): Refusal | Ticket {
    const { name, share, bounds } = bytes <= this.sizes.smallBodyBytes ? this.#small : this.#large;
    if (bytes > share.size) {
      return {
        refused: 413,
        error: `a declared length of ${bytes} bytes never fits its ${share.size}-byte share`,
      };
    }
    const leave = bounds.tryTake(address, bytes);
    if (!leave) return { refused: 503, error: `too many ${name} bodies from this address` };
    return placeIn(share, bytes, waitUntil, leave);
  }
}

function lane(name: Lane['name'], shareBytes: number, perAddress: number): Lane {
  return { name, share: new Slots(shareBytes), bounds: new AddressBounds(perAddress) };
}

/** Waits in `share`; `leave` runs once, when the place is given up or released. */
function placeIn(
  share: Slots,
  bytes: number,
  waitUntil: () => AbortSignal,
  leave: () => void,
): Ticket {
  const granted = share.tryTake(bytes) || share.take(waitUntil(), bytes);
  if (granted === false) leave();
  else if (granted !== true) void granted.then((ok) => ok || leave());
  return {
    granted,
    release() {
      share.release(bytes);
      leave();
    },
  };
}
