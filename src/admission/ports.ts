// The port the namespace check reads through (adapter: src/kube/namespace-api.ts):
// metadata-only list and watch of the opted-in namespaces (a ListerWatcher), and one live GET.

import type { ListerWatcher } from '../runtime/index.js';

export interface NamespaceLabels {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

export type NamespaceRead =
  | { readonly status: 'found'; readonly namespace: NamespaceLabels }
  | { readonly status: 'absent' }
  | { readonly status: 'failed'; readonly detail: string };

/** Metadata only (PartialObjectMetadata): names and labels, nothing else of a namespace. */
export interface NamespaceApi {
  /**
   * The opted-in namespaces (a label selector may leave the rest out), listed and watched;
   * a namespace that stops matching arrives as DELETED.
   */
  readonly optedIn: ListerWatcher<NamespaceLabels>;
  /** One live GET; resolves (never rejects), `failed` once `signal` aborts. */
  get(name: string, signal: AbortSignal): Promise<NamespaceRead>;
}
