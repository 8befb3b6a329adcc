// The port the namespace check reads through (adapter: src/kube/namespace-api.ts):
// metadata-only list and watch of the opted-in namespaces, and one live GET.

import type { WatchEnd } from '../runtime/index.js';

export interface NamespaceLabels {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export type NamespaceRead =
  | { readonly status: 'found'; readonly namespace: NamespaceLabels }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

export interface NamespaceWatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly namespace: NamespaceLabels;
}

/** Metadata only (PartialObjectMetadata): names and labels, nothing else of a namespace. */
export interface NamespaceApi {
  /** The opted-in namespaces (a label selector may leave the rest out), and where to watch from. */
  listOptedIn(
    signal: AbortSignal,
  ): Promise<{ namespaces: NamespaceLabels[]; resourceVersion: string }>;
  /**
   * Watches from `resourceVersion` until the server ends the watch or `signal`
   * aborts. A namespace that stops matching arrives as DELETED. `expired`: 410, relist.
   */
  watchOptedIn(
    resourceVersion: string,
    onEvent: (event: NamespaceWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd>;
  /** One live GET; resolves (never rejects), `failed` once `signal` aborts. */
  get(name: string, signal: AbortSignal): Promise<NamespaceRead>;
}
