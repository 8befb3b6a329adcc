// LeaseStore over coordination.k8s.io/v1: optimistic concurrency by resourceVersion.
// Each request goes through the bounded requests (requests.ts), besides the election's
// own budget per step (src/follow/lease.ts), so that no caller can forget a bound.

import type { LeaseRecord, LeaseStore, StoredLease } from '../follow/ports.js';
import { type ApiRequest, isStatus } from './client.js';
import type { ApiConnection } from './connection.js';
import { boundedRequests, type RequestOptions } from './requests.js';

interface Lease {
  metadata: { resourceVersion: string };
  spec?: Partial<LeaseRecord>;
}

export function createLeaseStore(
  connection: ApiConnection,
  namespace: string,
  name: string,
  options: RequestOptions = {},
): LeaseStore {
  const requests = boundedRequests(connection, options);
  const collection = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const item = `${collection}/${encodeURIComponent(name)}`;
  const body = (record: LeaseRecord, resourceVersion?: string) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(resourceVersion ? { resourceVersion } : {}) },
    spec: record,
  });
  const conflict = (error: unknown) => isStatus(error, 409, 404);
  const send = <T>(request: ApiRequest, signal: AbortSignal) =>
    requests.json<T>({ ...request, signal });
  return {
    async get(signal): Promise<StoredLease | undefined> {
      try {
        const lease = await send<Lease>({ method: 'GET', path: item }, signal);
        const spec = lease.spec ?? {};
        return {
          resourceVersion: lease.metadata.resourceVersion,
          record: {
            holderIdentity: spec.holderIdentity ?? '',
            leaseDurationSeconds: spec.leaseDurationSeconds ?? 15,
            acquireTime: spec.acquireTime,
            renewTime: spec.renewTime,
            leaseTransitions: spec.leaseTransitions ?? 0,
          },
        };
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        throw error;
      }
    },
    async create(record, signal) {
      try {
        await send({ method: 'POST', path: collection, body: body(record) }, signal);
        return true;
      } catch (error) {
        if (conflict(error)) return false;
        throw error;
      }
    },
    async update(record, resourceVersion, signal) {
      try {
        await send({ method: 'PUT', path: item, body: body(record, resourceVersion) }, signal);
        return true;
      } catch (error) {
        if (conflict(error)) return false;
        throw error;
      }
    },
  };
}
