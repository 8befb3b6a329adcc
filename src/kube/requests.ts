// The one way an adapter sends a one-shot request (docs/design.md §4 "Bounds", §6): every
// request carries its caller's signal and gives up after ApiTimeouts.requestMs, and every
// list comes in pages (`limit=` and `continue`), each page one bounded request. An adapter
// is given an ApiRequests and cannot send a request without these bounds. What watches
// need besides (the connection, the clock, the random source of their timeout) rides along.

import {
  API_TIMEOUTS,
  type ApiTimeouts,
  type Clock,
  type Random,
  systemClock,
  withDeadline,
} from '../runtime/index.js';
import { type ApiAnswer, type ApiRequest, exchange, requestJson } from './client.js';
import type { ApiConnection } from './connection.js';

/** Lists come in pages of this many (docs/design.md §6), each page one bounded request. */
const LIST_PAGE_SIZE = 500;

/** A request with its caller's signal, always. */
export type BoundedRequest = ApiRequest & { readonly signal: AbortSignal };

export interface ApiRequests {
  readonly connection: ApiConnection;
  readonly timeouts: ApiTimeouts;
  readonly clock: Clock;
  readonly random: Random;
  /** The parsed JSON of a 2xx; ApiError otherwise. */
  json<T>(request: BoundedRequest): Promise<T>;
  /** The answer whole, whatever its status. */
  exchange(request: BoundedRequest): Promise<ApiAnswer>;
  /**
   * GETs `path` page by page, handing each page's items on before asking for the next;
   * resolves to the list's resourceVersion.
   */
  list<T>(
    path: string,
    accept: string | undefined,
    onPage: (items: T[]) => void,
    signal: AbortSignal,
  ): Promise<string>;
}

export interface RequestOptions {
  readonly timeouts?: ApiTimeouts;
  readonly clock?: Clock;
  /** A watch's timeout is jittered with it (watch.ts). */
  readonly random?: Random;
}

interface ObjectList<T> {
  metadata: { resourceVersion: string; continue?: string };
  /** null in an empty metadata-only list (PartialObjectMetadataList). */
  items: T[] | null;
}

export function boundedRequests(
  connection: ApiConnection,
  { timeouts = API_TIMEOUTS, clock = systemClock, random = Math.random }: RequestOptions = {},
): ApiRequests {
  const bounded = <T>(signal: AbortSignal, send: (signal: AbortSignal) => Promise<T>) =>
    withDeadline(signal, timeouts.requestMs, send, clock);
  const json = <T>(request: BoundedRequest) =>
    bounded(request.signal, (signal) => requestJson<T>(connection, { ...request, signal }));
  return {
    connection,
    timeouts,
    clock,
    random,
    json,
    exchange: (request) =>
      bounded(request.signal, (signal) => exchange(connection, { ...request, signal })),
    async list<T>(
      path: string,
      accept: string | undefined,
      onPage: (items: T[]) => void,
      signal: AbortSignal,
    ) {
      const separator = path.includes('?') ? '&' : '?';
      let next: string | undefined = '';
      let resourceVersion = '';
      while (next !== undefined) {
        const token: string = next ? `&continue=${encodeURIComponent(next)}` : '';
        const page: ObjectList<T> = await json<ObjectList<T>>({
          method: 'GET',
          path: `${path}${separator}limit=${LIST_PAGE_SIZE}${token}`,
          ...(accept === undefined ? {} : { accept }),
          signal,
        });
        onPage(page.items ?? []);
        resourceVersion = page.metadata.resourceVersion;
        next = page.metadata.continue || undefined;
      }
      return resourceVersion;
    },
  };
}
