// The encoding and digest of docs/design.md §3 (keyed per namespace: keys.ts). The
// encoding is produced as bytes in a reused buffer and handed to the HMAC in large
// chunks: small pieces (keys, lengths, short values) are batched, a large value is
// passed through without a copy. Nothing is concatenated into one buffer.

import { createHmac } from 'node:crypto';
import { compareBytewise, compareSources, type KeySelection } from '../sources/index.js';
import { ENCODING_HEADER, type NamespaceKey } from './keys.js';
import type { EncodedValue, HashInput, SourceContent } from './source-content.js';

/**
 * Receives the encoding in order. A chunk is valid only during the call (the
 * buffers behind it are reused): consume it at once, or copy it.
 */
type EncodingSink = (chunk: Uint8Array) => void;

/** Sorts the inputs and writes their encoding to `sink`. */
function encodeSources(inputs: readonly HashInput[], sink: EncodingSink): void {
  const out = new ChunkWriter(sink);
  out.text(ENCODING_HEADER);
  for (const input of [...inputs].sort(compareSources)) {
    out.text(`${input.kind}\n${input.name}\n`);
    if (input.content === undefined) {
      out.text('absent\n');
      continue;
    }
    out.text('present\n');
    for (const key of selectedKeys(input.selection, input.content)) {
      const value = input.content.get(key);
      if (value === undefined) {
        out.text(`${key}\nmissing\n`);
        continue;
      }
      const bytes = valueBytes(value);
      // A base64 value's length comes from its text (exact: content.ts keeps it canonical).
      const length =
        value.encoding === 'base64' ? Buffer.byteLength(value.text, 'base64') : bytes.length;
      out.text(`${key}\n${length}\n`);
      out.bytes(bytes);
      out.text('\n');
    }
  }
  out.flush();
}

function selectedKeys(selection: KeySelection, content: SourceContent): string[] {
  const keys = selection.all ? [...content.keys()] : [...selection.keys];
  return keys.sort(compareBytewise);
}

/** `hash` annotation value: lowercase hex HMAC-SHA256 of the encoding, with a namespace's key. */
export function computeHash(namespaceKey: NamespaceKey, inputs: readonly HashInput[]): string {
  const hmac = createHmac('sha256', namespaceKey);
  encodeSources(inputs, (chunk) => hmac.update(chunk));
  return hmac.digest('hex');
}

/** How many hex characters of a hash name a source's content (contentDigest). */
const CONTENT_DIGEST_LENGTH = 16;

/**
 * A source's content, named for approval (docs/design.md §6, approval above a size): the hash
 * of the source with every key selected, shortened. Keyed like every hash, so printing it says
 * nothing of a Secret's values; content only, so no metadata write changes it.
 */
export function contentDigest(
  namespaceKey: NamespaceKey,
  source: Pick<HashInput, 'kind' | 'name' | 'content'>,
): string {
  const input = { ...source, selection: { all: true } } as const;
  return computeHash(namespaceKey, [input]).slice(0, CONTENT_DIGEST_LENGTH);
}

/** The encoding as one buffer, for tests and debugging; hashing never needs it. */
export function encodeToBuffer(inputs: readonly HashInput[]): Buffer {
  const parts: Buffer[] = [];
  encodeSources(inputs, (chunk) => parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts);
}

// --- bytes --------------------------------------------------------------------------

const CHUNK_BYTES = 64 * 1024;
/** Larger values are handed to the sink as they are rather than copied into the chunk. */
const PASS_THROUGH_BYTES = 16 * 1024;
/** A value scratch buffer larger than this is not kept between calls. */
const MAX_RETAINED_SCRATCH = 8 * 1024 * 1024;

const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
let scratch = Buffer.allocUnsafe(CHUNK_BYTES);

/**
 * A value's bytes, written into the reused scratch buffer: valid until the next
 * call. Writing UTF-8 this way is ~3× faster than `Buffer.byteLength` alone,
 * so the length costs nothing extra (BENCHMARKS.md, scenario 6).
 */
function valueBytes(value: EncodedValue): Buffer {
  // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units).
  const room =
    value.encoding === 'utf8' ? value.text.length * 3 : Buffer.byteLength(value.text, 'base64');
  let target = scratch;
  if (room > target.length) {
    target = Buffer.allocUnsafe(room);
    if (room <= MAX_RETAINED_SCRATCH) scratch = target;
  }
  const written = target.write(value.text, 0, value.encoding);
  return target.subarray(0, written);
}

/** Batches small pieces into a reused chunk; flushes it to the sink when full. */
class ChunkWriter {
  #used = 0;

  constructor(private readonly sink: EncodingSink) {}

  text(text: string): void {
    if (text.length * 3 > chunk.length - this.#used) {
      this.flush();
      if (text.length * 3 > chunk.length) {
        this.sink(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.#used += chunk.write(text, this.#used, 'utf8');
  }

  bytes(bytes: Uint8Array): void {
    if (bytes.length >= PASS_THROUGH_BYTES) {
      this.flush();
      this.sink(bytes);
      return;
    }
    if (bytes.length > chunk.length - this.#used) this.flush();
    chunk.set(bytes, this.#used);
    this.#used += bytes.length;
  }

  flush(): void {
    if (this.#used === 0) return;
    this.sink(chunk.subarray(0, this.#used));
    this.#used = 0;
  }
}
