// The v1 encoding and digest (DESIGN.md §3). The encoding is streamed into the
// HMAC piece by piece: values are never concatenated or copied into one buffer.

import { createHmac } from 'node:crypto';
import { compareBytewise, compareSources } from './order.js';
import type { HashInput, KeySelection, SourceContent } from './types.js';

export const ENCODING_HEADER = 'confighash/v1\n';

/** Receives the encoding in order; `write` takes UTF-8 text or base64 to decode. */
export interface EncodingSink {
  write(text: string, encoding: 'utf8' | 'base64'): void;
}

/** Sorts the inputs and writes their v1 encoding to `sink`. */
export function encodeSources(inputs: readonly HashInput[], sink: EncodingSink): void {
  sink.write(ENCODING_HEADER, 'utf8');
  for (const input of [...inputs].sort(compareSources)) {
    sink.write(`${input.kind}\n${input.name}\n`, 'utf8');
    if (input.content === undefined) {
      sink.write('absent\n', 'utf8');
      continue;
    }
    sink.write('present\n', 'utf8');
    for (const key of selectedKeys(input.selection, input.content)) {
      const value = input.content.get(key);
      if (value === undefined) {
        sink.write(`${key}\nmissing\n`, 'utf8');
        continue;
      }
      sink.write(`${key}\n${Buffer.byteLength(value.text, value.encoding)}\n`, 'utf8');
      sink.write(value.text, value.encoding);
      sink.write('\n', 'utf8');
    }
  }
}

function selectedKeys(selection: KeySelection, content: SourceContent): string[] {
  const keys = selection.all ? [...content.keys()] : [...selection.keys];
  return keys.sort(compareBytewise);
}

/** `hash` annotation value: lowercase hex HMAC-SHA256 of the encoding. */
export function computeHash(hashKey: Uint8Array, inputs: readonly HashInput[]): string {
  const hmac = createHmac('sha256', hashKey);
  encodeSources(inputs, { write: (text, encoding) => hmac.update(text, encoding) });
  return hmac.digest('hex');
}

/** The encoding as one buffer, for tests and debugging; hashing never needs it. */
export function encodeToBuffer(inputs: readonly HashInput[]): Buffer {
  const parts: Buffer[] = [];
  encodeSources(inputs, { write: (text, encoding) => parts.push(Buffer.from(text, encoding)) });
  return Buffer.concat(parts);
}

/** `sources` annotation value: `configmap/a,secret/b`, in hash order. */
export function formatSourceList(
  sources: readonly { readonly kind: HashInput['kind']; readonly name: string }[],
): string {
  return [...sources]
    .sort(compareSources)
    .map((source) => `${source.kind.toLowerCase()}/${source.name}`)
    .join(',');
}
