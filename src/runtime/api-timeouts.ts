// How long the adapters wait on the API (docs/design.md §6): a request that never
// answers — a dead keep-alive socket, a stalled apiserver — must cost one attempt, never
// the touch queue, a watch or the webhook's view of the opted-in namespaces. Injectable,
// so that tests need not wait minutes.

export interface ApiTimeouts {
  /** Every request (GET, LIST, PATCH, Event POST, Lease), and a watch until its stream starts. */
  readonly requestMs: number;
  /** A watch (bookmarks on) with neither event nor bookmark for this long is restarted. */
  readonly watchSilenceMs: number;
}

export const API_TIMEOUTS: ApiTimeouts = { requestMs: 10_000, watchSilenceMs: 5 * 60_000 };
