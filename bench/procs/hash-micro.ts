// Scenario 6, in its own process: the encoding + HMAC (src/hash) over 1 MiB
// against node:crypto SHA-256 over the same bytes, in alternating blocks so that
// both see the same machine. Ratio = hash throughput ÷ raw throughput. It hashes
// v2 with a namespace key derived once, as the evaluator does; v1 encodes the same
// bytes under another first line (the `v1UsPerMiB` field keeps its name for the
// results already recorded).

import { createHash } from 'node:crypto';
import {
  computeHash,
  contentOfConfigMap,
  contentOfSecret,
  deriveNamespaceKey,
  type HashInput,
} from '../../src/hash/index.js';
import { serveRequests } from './ipc.js';

export interface HashCase {
  readonly name: string;
  readonly bytes: number;
  /** Median µs per MiB. */
  readonly v1UsPerMiB: number;
  readonly rawUsPerMiB: number;
  /** v1 throughput ÷ raw SHA-256 throughput (median of rounds). */
  readonly ratio: number;
}

const MIB = 1024 * 1024;
const KEY = deriveNamespaceKey(Buffer.alloc(32, 7), 'bench');

function bytesOf(length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) buffer[i] = (i * 131 + 7) & 0xff;
  return buffer;
}

function textOf(length: number): string {
  const line = 'feature.flag.enabled: true # bench filler line\n';
  return line.repeat(Math.ceil(length / line.length)).slice(0, length);
}

function input(kind: HashInput['kind'], content: HashInput['content']): HashInput[] {
  return [{ kind, name: 'bench', selection: { all: true }, content }];
}

function measure(
  name: string,
  bytes: number,
  v1: () => unknown,
  raw: () => unknown,
  rounds: number,
): HashCase {
  const block = 10;
  for (let i = 0; i < 20; i++) {
    v1();
    raw();
  }
  const time = (f: () => unknown) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < block; i++) f();
    return Number(process.hrtime.bigint() - start) / 1000 / block;
  };
  const v1Times: number[] = [];
  const rawTimes: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const a = time(v1);
    const b = time(raw);
    v1Times.push(a);
    rawTimes.push(b);
    ratios.push(b / a);
  }
  const perMiB = MIB / bytes;
  return {
    name,
    bytes,
    v1UsPerMiB: median(v1Times) * perMiB,
    rawUsPerMiB: median(rawTimes) * perMiB,
    ratio: median(ratios),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const sha256 = (buffer: Buffer) => () => createHash('sha256').update(buffer).digest('hex');

serveRequests({
  run(message) {
    const rounds = message.rounds as number;
    const text = textOf(MIB);
    const textBytes = Buffer.from(text);
    const binary = bytesOf(MIB);
    const base64 = binary.toString('base64');
    const configMap = contentOfConfigMap({ data: { 'app.yaml': text } });
    const secret = contentOfSecret({ data: { password: base64 } });
    const smallKeys: Record<string, string> = {};
    for (let i = 0; i < 1024; i++) smallKeys[`key-${String(i).padStart(4, '0')}`] = textOf(1024);
    const smallKeysContent = contentOfConfigMap({ data: smallKeys });
    const smallKeysBytes = Buffer.from(Object.values(smallKeys).join(''));
    return [
      measure(
        'ConfigMap data, 1 key × 1 MiB text',
        MIB,
        () => computeHash(KEY, input('ConfigMap', configMap)),
        sha256(textBytes),
        rounds,
      ),
      measure(
        'Secret data, 1 key × 1 MiB (base64 on the wire)',
        MIB,
        () => computeHash(KEY, input('Secret', secret)),
        sha256(binary),
        rounds,
      ),
      measure(
        'ConfigMap data, 1,024 keys × 1 KiB',
        MIB,
        () => computeHash(KEY, input('ConfigMap', smallKeysContent)),
        sha256(smallKeysBytes),
        rounds,
      ),
      measure(
        'Secret, API object → content → hash',
        MIB,
        () => computeHash(KEY, input('Secret', contentOfSecret({ data: { password: base64 } }))),
        sha256(binary),
        rounds,
      ),
    ];
  },
});
