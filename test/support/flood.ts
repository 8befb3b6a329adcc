// A flood of slow large bodies against the webhook's port (docs/security.md "Slow bodies,
// huge bodies, thousands of sources"): connections whose declared lengths fill the body
// budget exactly, and waiters of halving sizes that take whatever a cut frees, each
// trickling a byte a second and coming back when cut off. Every connection comes from a
// loopback address of its own, as from pods of their own, so that no bound per address
// stops the flood: what keeps small reviews on time under it is the small share. From one
// address (`oneAddress`), it is the bound per address that does.

import net from 'node:net';
import tls from 'node:tls';
import { sleep } from '../../tools/lib/poll.js';

export interface FloodTarget {
  readonly port: number;
  readonly ca: string | Buffer;
}

export interface FloodOptions {
  /** How often each connection sends its next byte. */
  readonly trickleMs?: number;
  /** Between one round's headers sent and the next round's start: time for the server to let them in. */
  readonly roundGapMs?: number;
  /** Connections per declared length, the first included: the flood is bounded in count. */
  readonly connectionsEach?: number;
  /** Every connection from the same loopback address, as from one pod (default: one each). */
  readonly oneAddress?: boolean;
}

export interface FloodReport {
  /** Connections opened, reconnections included. */
  readonly connections: number;
  /** How each ended before the flood stopped: its answer's status code, or "closed" without one. */
  readonly ends: Readonly<Record<string, number>>;
}

export interface Flood {
  /** Every connection of every round has sent its headers once. */
  readonly started: Promise<void>;
  /** Stops trickling and reconnecting, closes what is open. */
  stop(): FloodReport;
}

/**
 * Rounds of declared lengths: for each budget in turn, as many bodies of `largest` as fit
 * it and then what is left, so that each fills its budget exactly once the rounds before
 * it are in; then waiters of halving sizes down to the smallest still above `small`. For a
 * 32 MiB budget and 7 MiB bodies: four of 7 MiB and one of 4 MiB, then 3.5 MiB, 1.75 MiB
 * and so on.
 */
export function floodRounds(
  budgets: readonly number[],
  largest: number,
  small: number,
): number[][] {
  const fill = (budget: number) => {
    const lengths: number[] = [];
    let left = budget;
    for (; left >= largest; left -= largest) lengths.push(largest);
    if (left > 0) lengths.push(left);
    return lengths;
  };
  const waiters: number[] = [];
  for (let waiter = Math.floor(largest / 2); waiter > small; waiter = Math.floor(waiter / 2)) {
    waiters.push(waiter);
  }
  return [...budgets.map(fill), waiters];
}

/** The `index`th loopback address after 127.0.0.1, which stays the reviews' own. */
export function loopbackAddress(index: number): string {
  return `127.0.${Math.floor((index + 2) / 256)}.${(index + 2) % 256}`;
}

export function startFlood(
  target: FloodTarget,
  rounds: readonly (readonly number[])[],
  options: FloodOptions = {},
): Flood {
  const trickleMs = options.trickleMs ?? 1_000;
  const roundGapMs = options.roundGapMs ?? 250;
  const connectionsEach = options.connectionsEach ?? 4;
  const open = new Set<tls.TLSSocket>();
  const ends: Record<string, number> = {};
  let connections = 0;
  let stopped = false;

  const connect = (length: number, address: string, left: number): Promise<void> =>
    new Promise((sent) => {
      connections++;
      const socket = tls.connect({
        socket: net.connect({ host: '127.0.0.1', port: target.port, localAddress: address }),
        host: '127.0.0.1',
        ca: target.ca,
      });
      open.add(socket);
      let answer = '';
      let trickle: NodeJS.Timeout | undefined;
      socket.once('secureConnect', () => {
        trickle = setInterval(() => socket.write(' '), trickleMs);
        socket.write(
          `POST /mutate?timeout=5s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n{`,
          () => sent(),
        );
      });
      // A connection ends with its answer (a refusal may leave the socket open while the
      // server discards the body), or with its close when none came.
      let ended = false;
      const end = (code: string) => {
        if (ended || stopped) return;
        ended = true;
        ends[code] = (ends[code] ?? 0) + 1;
      };
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        const code = /^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1];
        if (code) end(code);
      });
      socket.on('error', () => sent());
      socket.once('close', () => {
        clearInterval(trickle);
        open.delete(socket);
        sent();
        end('closed');
        if (!stopped && left > 1) void connect(length, address, left - 1);
      });
    });

  const startRounds = async () => {
    let address = 0;
    for (const round of rounds) {
      if (stopped) return;
      await Promise.all(
        round.map((length) =>
          connect(length, loopbackAddress(options.oneAddress ? 0 : address++), connectionsEach),
        ),
      );
      await sleep(roundGapMs);
    }
  };
  const started = startRounds();
  return {
    started,
    stop() {
      stopped = true;
      for (const socket of open) socket.destroy();
      return { connections, ends: { ...ends } };
    },
  };
}
