// The reference index of follow mode (docs/design.md §6 "A reference index, not a cache"):
// which workload reads which ConfigMaps and Secrets, and which resourceVersion each
// source has now — a reverse map, not a cache. Per workload it keeps only its ref, the
// sources it reads, the hash it carries and the sources' versions its last evaluation
// saw; per source only its resourceVersion. No template, no content. The webhook's
// live lookups stay the only judge: the index only says whom to ask. Pure, no I/O.

import {
  dropUnlistedSources,
  linkReader,
  type NamespaceIndex,
  newNamespaceIndex,
  type Reader,
  readerCountOf,
  readerKeysOf,
  staleIn,
  unlinkReader,
} from './namespace-index.js';
import type { References } from './references.js';
import { type WorkloadRef, workloadKey } from './workload-ref.js';

export type { Reader } from './namespace-index.js';

export class ReferenceIndex {
  readonly #namespaces = new Map<string, NamespaceIndex>();

  /**
   * A workload as listed or watched (ADDED, MODIFIED): its entry is set from the object,
   * which corrects whatever the index believed. What its last evaluation saw is kept, so
   * the MODIFIED event of a touch's own patch asks for nothing; a workload this leader
   * never evaluated counts as seen at the versions the webhook read for its hash.
   */
  putWorkload(references: References): void {
    const { ref, sources, hash, hashedVersions, canary, observable } = references;
    const space = this.#space(ref.namespace);
    const key = workloadKey(ref);
    const entry = space.workloads.get(key);
    if (entry) for (const source of entry.sources) unlinkReader(space, source, key);
    // What it saw stays only for the same sources: a workload that reads others is evaluated anew.
    const evaluated = entry && sameSources(entry.sources, sources) ? entry.seen : undefined;
    const seen = evaluated ?? hashedVersions;
    space.workloads.set(key, { ref, sources, hash, canary, observable, seen });
    for (const source of sources) linkReader(space, source, key);
  }

  deleteWorkload(ref: WorkloadRef): void {
    const space = this.#namespaces.get(ref.namespace);
    const key = workloadKey(ref);
    const entry = space?.workloads.get(key);
    if (!space || !entry) return;
    for (const source of entry.sources) unlinkReader(space, source, key);
    space.workloads.delete(key);
  }

  /**
   * A source's resourceVersion now, or undefined when it was deleted; returns the
   * workloads that read it when the version moved (none when it is the one known).
   */
  setSource(
    namespace: string,
    source: string,
    version: string | undefined,
    record?: string,
  ): Reader[] {
    const space = this.#space(namespace);
    if (record === undefined || version === undefined) space.records.delete(source);
    else space.records.set(source, record);
    if (space.versions.get(source) === version) return [];
    space.sameContent.delete(source);
    if (version === undefined) space.versions.delete(source);
    else space.versions.set(source, version);
    return this.readersOf(namespace, source);
  }

  /**
   * Follow mode wrote only metadata of `source` (its fan-out record), moving it from version
   * `from` to `to`: a reader that saw `from` saw the same content, so it saw `to`.
   */
  advanceSource(namespace: string, source: string, from: string, to: string, record: string) {
    const space = this.#namespaces.get(namespace);
    if (!space) return;
    for (const entry of space.workloads.values()) {
      const at = entry.sources.indexOf(source);
      if (at >= 0 && entry.seen?.[at] === from) {
        entry.seen = entry.seen.map((version, i) => (i === at ? to : version));
      }
    }
    const earlier = space.sameContent.get(source) ?? [];
    this.setSource(namespace, source, to, record);
    space.sameContent.set(source, [...earlier, from].slice(-SAME_CONTENT_KEPT));
  }

  /**
   * Whether a read of `source` at `version` saw its content as the watches show it now: the
   * version now, or one follow mode's own metadata writes moved it from; false when unknown.
   */
  shows(namespace: string, source: string, version: string): boolean {
    const space = this.#namespaces.get(namespace);
    const now = space?.versions.get(source);
    if (now === undefined) return true; // Not watched (yet): nothing to compare with.
    return now === version || (space!.sameContent.get(source) ?? []).includes(version);
  }

  /** The source's `confighash.dev/fanout` annotation as last listed, watched or written. */
  recordOf(namespace: string, source: string): string | undefined {
    return this.#namespaces.get(namespace)?.records.get(source);
  }

  /** Every source that carries a fan-out record. */
  recordedSources(): { namespace: string; source: string }[] {
    return [...this.#namespaces].flatMap(([namespace, space]) =>
      [...space.records.keys()].map((source) => ({ namespace, source })),
    );
  }

  readersOf(namespace: string, source: string): Reader[] {
    const space = this.#namespaces.get(namespace);
    return readerKeysOf(space, source).map((key) => {
      const { ref, canary, observable } = space!.workloads.get(key)!;
      return { ref, canary, observable };
    });
  }

  /** How many workloads read `source`. */
  readerCount(namespace: string, source: string): number {
    return readerCountOf(this.#namespaces.get(namespace), source);
  }

  /** The sources `ref` reads, as last listed or watched. */
  sourcesOf(ref: WorkloadRef): readonly string[] {
    return this.#namespaces.get(ref.namespace)?.workloads.get(workloadKey(ref))?.sources ?? [];
  }

  /** `source`'s resourceVersion now; undefined when it is not known (or deleted). */
  versionOf(namespace: string, source: string): string | undefined {
    return this.#namespaces.get(namespace)?.versions.get(source);
  }

  /** `ref` is being evaluated now: what it saw is the versions of its sources as known now. */
  evaluated(ref: WorkloadRef): void {
    const space = this.#namespaces.get(ref.namespace);
    const entry = space?.workloads.get(workloadKey(ref));
    if (!space || !entry) return;
    entry.seen = entry.sources.map((source) => space.versions.get(source));
  }

  /**
   * Workloads one of whose sources moved since this leader evaluated them (or since the
   * webhook hashed them), or that nothing says was ever evaluated.
   */
  stale(): WorkloadRef[] {
    return [...this.#namespaces.values()].flatMap(staleIn);
  }

  /** The sources of `ref` whose version moved since it was last evaluated (all, if never). */
  movedSources(ref: WorkloadRef): string[] {
    const space = this.#namespaces.get(ref.namespace);
    const entry = space?.workloads.get(workloadKey(ref));
    if (!space || !entry) return [];
    const { seen } = entry;
    return entry.sources.filter((source, i) => seen?.[i] !== space.versions.get(source));
  }

  /**
   * After a list of `namespace` (undefined: every namespace): drops the sources of
   * `prefix` (`configmap/`, `secret/`) it did not show; `listed` holds `namespace/source`.
   */
  retainSources(namespace: string | undefined, prefix: string, listed: ReadonlySet<string>): void {
    for (const [name, space] of this.#scope(namespace)) {
      dropUnlistedSources(space, prefix, (source) => listed.has(`${name}/${source}`));
    }
  }

  /** After a list of one kind: drops its workloads the list did not show (`listed`: workloadKey). */
  retainWorkloads(
    namespace: string | undefined,
    kind: WorkloadRef['kind'],
    listed: ReadonlySet<string>,
  ): void {
    for (const [, space] of this.#scope(namespace)) {
      for (const [key, entry] of space.workloads) {
        if (sameKind(entry.ref.kind, kind) && !listed.has(key)) this.deleteWorkload(entry.ref);
      }
    }
  }

  /** A namespace no longer followed: nothing of it is kept. */
  dropNamespace(namespace: string): void {
    this.#namespaces.delete(namespace);
  }

  /** How many workloads and sources it holds (for logs). */
  counts(): { workloads: number; sources: number } {
    let workloads = 0;
    let sources = 0;
    for (const space of this.#namespaces.values()) {
      workloads += space.workloads.size;
      sources += space.versions.size;
    }
    return { workloads, sources };
  }

  #space(namespace: string): NamespaceIndex {
    let space = this.#namespaces.get(namespace);
    if (!space) {
      space = newNamespaceIndex();
      this.#namespaces.set(namespace, space);
    }
    return space;
  }

  #scope(namespace: string | undefined): [string, NamespaceIndex][] {
    if (namespace === undefined) return [...this.#namespaces];
    const space = this.#namespaces.get(namespace);
    return space ? [[namespace, space]] : [];
  }
}

/** A record written a few times within one change (sent, passed, drained) keeps them all. */
const SAME_CONTENT_KEPT = 4;

function sameSources(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((source, i) => source === b[i]);
}

function sameKind(a: WorkloadRef['kind'], b: WorkloadRef['kind']): boolean {
  return a.group === b.group && a.kind === b.kind;
}
