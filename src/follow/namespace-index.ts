// One followed namespace's part of the reference index (reference-index.ts): its sources'
// versions and records, its workloads' entries, and who reads each source. Most sources have
// one reader, so a source's readers are one key until a second comes. Pure, no I/O.

import type { References } from './references.js';
import type { WorkloadRef } from './workload-ref.js';

/** A workload that reads a source, with what a fan-out needs to know of it. */
export type Reader = Pick<References, 'ref' | 'canary' | 'observable'>;

interface Entry extends Reader {
  sources: readonly string[];
  hash: string | undefined;
  /**
   * The version of each of `sources` (same order) when this leader last evaluated it, or
   * else when the webhook hashed it; undefined: neither. An array, not a map: the index
   * holds one per workload.
   */
  seen: readonly (string | undefined)[] | undefined;
}

/**
 * The workload keys that read one source: most sources have one reader, and a Set each
 * would be most of the index's memory.
 */
type ReaderKeys = string | Set<string>;

/** One followed namespace's part of the index. Sources are named `configmap/NAME`. */
export interface NamespaceIndex {
  readonly versions: Map<string, string>;
  /** The `confighash.dev/fanout` annotation of the few sources that carry one. */
  readonly records: Map<string, string>;
  /**
   * Earlier versions of a source whose content is the current version's: those follow mode's
   * own metadata writes (its fan-out record) moved it from. Few, and only for such sources.
   */
  readonly sameContent: Map<string, readonly string[]>;
  readonly workloads: Map<string, Entry>;
  readonly readers: Map<string, ReaderKeys>;
}

export function newNamespaceIndex(): NamespaceIndex {
  return {
    versions: new Map(),
    records: new Map(),
    sameContent: new Map(),
    workloads: new Map(),
    readers: new Map(),
  };
}

/** `key` (a workload key) reads `source`. */
export function linkReader(space: NamespaceIndex, source: string, key: string): void {
  const readers = space.readers.get(source);
  if (readers === undefined) space.readers.set(source, key);
  else if (typeof readers === 'string') {
    if (readers !== key) space.readers.set(source, new Set([readers, key]));
  } else readers.add(key);
}

/** `key` no longer reads `source`; a Set left with one key becomes that key again. */
export function unlinkReader(space: NamespaceIndex, source: string, key: string): void {
  const readers = space.readers.get(source);
  if (readers === key) space.readers.delete(source);
  else if (typeof readers === 'object') {
    readers.delete(key);
    if (readers.size === 1) space.readers.set(source, readers.values().next().value!);
  }
}

/** The keys of the workloads that read `source`. */
export function readerKeysOf(space: NamespaceIndex | undefined, source: string): string[] {
  const readers = space?.readers.get(source);
  return readers === undefined ? [] : typeof readers === 'string' ? [readers] : [...readers];
}

export function readerCountOf(space: NamespaceIndex | undefined, source: string): number {
  const readers = space?.readers.get(source);
  return readers === undefined ? 0 : typeof readers === 'string' ? 1 : readers.size;
}

/** Its workloads one of whose sources moved since what they last saw, or that saw nothing. */
export function staleIn(space: NamespaceIndex): WorkloadRef[] {
  const found: WorkloadRef[] = [];
  for (const entry of space.workloads.values()) {
    const { seen } = entry;
    const moved =
      seen === undefined ||
      entry.sources.some((source, i) => space.versions.get(source) !== seen[i]);
    if (moved) found.push(entry.ref);
  }
  return found;
}

/** Drops the sources named with `prefix` (`configmap/`, `secret/`) that `listed` does not hold. */
export function dropUnlistedSources(
  space: NamespaceIndex,
  prefix: string,
  listed: (source: string) => boolean,
): void {
  for (const source of space.versions.keys()) {
    if (source.startsWith(prefix) && !listed(source)) {
      space.versions.delete(source);
      space.records.delete(source);
      space.sameContent.delete(source);
    }
  }
}
