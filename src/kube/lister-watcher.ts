// The ListerWatcher port over the API server (src/runtime/list-watch.ts): a resource is
// its collection path, its representation and a decoder; lists go page by page through
// the bounded requests (requests.ts), watches through watch.ts. Follow mode and the
// namespace check hand in only their handlers.

import type { ListerWatcher, ObjectEventType } from '../runtime/index.js';
import { isStatus, METADATA_ONLY_LIST, METADATA_ONLY_OBJECT } from './client.js';
import type { ApiRequests } from './requests.js';
import { watchFrom } from './watch.js';

export interface ResourceSpec<T> {
  /** The collection, with its label selector if any. */
  readonly path: string;
  /** PartialObjectMetadata: names, versions, labels and annotations, no data or spec. */
  readonly metadataOnly?: boolean;
  /** An item of a list or the object of a watch event; none when it is not one of ours. */
  decode(object: unknown): readonly T[];
  /** A 404 of the list means the resource is not served (its CRD is absent): listed again later. */
  readonly mayBeAbsent?: boolean;
}

/** `spec` as a ListerWatcher: each list and watch bounded, its objects decoded into the handler. */
export function listerWatcher<T>(requests: ApiRequests, spec: ResourceSpec<T>): ListerWatcher<T> {
  const { path, metadataOnly = false, decode, mayBeAbsent = false } = spec;
  const listAccept = metadataOnly ? METADATA_ONLY_LIST : undefined;
  const watchAccept = metadataOnly ? METADATA_ONLY_OBJECT : 'application/json';
  return (handler) => ({
    async list(signal) {
      const pages = handler.list();
      try {
        const version = await requests.list<unknown>(
          path,
          listAccept,
          (items) => pages.page(items.flatMap((item) => decode(item))),
          signal,
        );
        pages.end();
        return version;
      } catch (error) {
        if (mayBeAbsent && isStatus(error, 404)) return undefined;
        throw error;
      }
    },
    watch: (resourceVersion, signal) =>
      watchFrom(requests, path, resourceVersion, watchAccept, signal, (event) => {
        for (const object of decode(event.object))
          handler.event(event.type as ObjectEventType, object);
      }),
  });
}
