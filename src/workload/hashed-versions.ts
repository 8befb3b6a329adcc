// What a hash was computed from (docs/design.md §2, §6): the resourceVersion of each source
// the webhook read for the hash a workload carries, so that follow mode can take a workload
// whose write was hashed as evaluated at those versions instead of reading everything again.
// The value starts with a binding to the hash, the hash key that made it and what the
// template selects: a write the webhook never saw, which dropped the hash or selects other
// keys, and a hash made with a key the reader does not hash with, leave a binding that does
// not match, and the versions count for nothing. Versions are compared for equality only. Pure.

import { createHash } from 'node:crypto';
import { compareBytewise, compareSources, formatSource, type SourceRef } from '../sources/index.js';

/** A hash and the id (hashKeyId) of the hash key that made it. */
interface HashMadeWith {
  readonly keyId: string;
  readonly hash: string;
}

/** A source and the resourceVersion it was read at; undefined: it was absent. */
interface SourceVersion {
  readonly ref: SourceRef;
  readonly version: string | undefined;
}

const ABSENT = '-';
const BINDING_LENGTH = 16;
/** A version the value can carry: anything but its own separators. */
const PLAIN_VERSION = /^[^\s,=]+$/;

/**
 * The annotation value for `made`, computed from `read`; undefined when a version cannot be
 * written plainly (the API's versions are digits; anything else is not guessed at).
 */
export function formatHashedVersions(
  made: HashMadeWith,
  read: readonly SourceVersion[],
): string | undefined {
  const sorted = [...read].sort((a, b) => compareSources(a.ref, b.ref));
  const entries: string[] = [];
  for (const { ref, version } of sorted) {
    if (version !== undefined && (version === ABSENT || !PLAIN_VERSION.test(version))) {
      return undefined;
    }
    entries.push(`${formatSource(ref)}=${version ?? ABSENT}`);
  }
  const binding = bindingOf(
    made,
    sorted.map(({ ref }) => ref),
  );
  return `${binding} ${entries.join(',')}`;
}

/**
 * The versions `value` records for `refs` (in their order), when it was written for this hash
 * made with this key, and these refs exactly; undefined otherwise (no value, another hash or
 * key, other selections).
 */
export function readHashedVersions(
  value: string | undefined,
  made: Omit<HashMadeWith, 'hash'> & { readonly hash: string | undefined },
  refs: readonly SourceRef[],
): (string | undefined)[] | undefined {
  const { keyId, hash } = made;
  if (value === undefined || hash === undefined || refs.length === 0) return undefined;
  const space = value.indexOf(' ');
  if (space < 0) return undefined;
  if (value.slice(0, space) !== bindingOf({ keyId, hash }, [...refs].sort(compareSources))) {
    return undefined;
  }
  const versions = new Map<string, string>();
  for (const entry of value.slice(space + 1).split(',')) {
    const equals = entry.lastIndexOf('=');
    if (equals < 0) return undefined;
    versions.set(entry.slice(0, equals), entry.slice(equals + 1));
  }
  if (versions.size !== refs.length) return undefined;
  const found: (string | undefined)[] = [];
  for (const ref of refs) {
    const version = versions.get(formatSource(ref));
    if (version === undefined) return undefined;
    found.push(version === ABSENT ? undefined : version);
  }
  return found;
}

/**
 * The first 16 hex characters of SHA-256 over the key's id, the hash and every ref as the
 * template selects it, `sortedRefs` in compareSources order. The key's id is itself a digest;
 * it is never written on its own.
 */
function bindingOf({ keyId, hash }: HashMadeWith, sortedRefs: readonly SourceRef[]): string {
  const digest = createHash('sha256').update(`${keyId}\n${hash}`);
  for (const ref of sortedRefs) digest.update(`\n${describeRef(ref)}`);
  return digest.digest('hex').slice(0, BINDING_LENGTH);
}

/** `ConfigMap/app optional=false keys=* required=LOG_LEVEL`: everything a ref says, in one order. */
function describeRef({ kind, name, optional, selection, requiredKeys }: SourceRef): string {
  const keys = selection.all ? '*' : sortedKeys(selection.keys);
  return `${kind}/${name} optional=${optional} keys=${keys} required=${sortedKeys(requiredKeys)}`;
}

function sortedKeys(keys: ReadonlySet<string>): string {
  return JSON.stringify([...keys].sort(compareBytewise));
}
