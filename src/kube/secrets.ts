// The SecretStore port of self-managed certificates (src/certs/ports.ts)
// over the API, through the bounded requests (requests.ts): each one gives up after
// ApiTimeouts.requestMs, or when its caller's signal aborts. 404 and 409 are
// outcomes, checked by status code; anything else is an error with a one-line
// reason.

import type { SecretBytes, SecretStore } from '../certs/ports.js';
import { describeFailure, FIELD_MANAGER_QUERY, isStatus } from './client.js';
import type { ApiConnection } from './connection.js';
import { boundedRequests, type RequestOptions } from './requests.js';

/** A caller without a signal of its own: the time limit alone bounds its request. */
const NO_CALLER_SIGNAL = new AbortController().signal;

const LABELS = {
  'app.kubernetes.io/name': 'confighash',
  'app.kubernetes.io/managed-by': 'confighash',
};

interface Secret {
  metadata?: { resourceVersion?: string };
  data?: Record<string, string>;
}

export function createSecretStore(
  connection: ApiConnection,
  namespace: string,
  options: RequestOptions = {},
): SecretStore {
  const requests = boundedRequests(connection, options);
  const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const item = (name: string) => `${collection}/${encodeURIComponent(name)}`;
  const body = (name: string, type: string, data: SecretBytes, resourceVersion?: string) =>
    secretBody({ name, namespace, type, data, resourceVersion });
  return {
    namespace,
    async read(name, signal = NO_CALLER_SIGNAL) {
      try {
        const secret = await requests.json<Secret>({ method: 'GET', path: item(name), signal });
        return {
          data: decodeData(secret.data),
          resourceVersion: secret.metadata?.resourceVersion ?? '',
        };
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        throw describeFailure(error, `read Secret ${namespace}/${name}`);
      }
    },
    async create(name, type, data, signal = NO_CALLER_SIGNAL) {
      try {
        await requests.json({
          method: 'POST',
          path: `${collection}?${FIELD_MANAGER_QUERY}`,
          body: body(name, type, data),
          signal,
        });
        return 'created';
      } catch (error) {
        if (isStatus(error, 409)) return 'exists';
        throw describeFailure(error, `create Secret ${namespace}/${name}`);
      }
    },
    async replace(name, type, data, resourceVersion, signal = NO_CALLER_SIGNAL) {
      try {
        await requests.json({
          method: 'PUT',
          path: `${item(name)}?${FIELD_MANAGER_QUERY}`,
          body: body(name, type, data, resourceVersion),
          signal,
        });
        return 'replaced';
      } catch (error) {
        if (isStatus(error, 409)) return 'conflict';
        throw describeFailure(error, `update Secret ${namespace}/${name}`);
      }
    },
  };
}

/** A Secret as the API takes it: our labels, the data in base64, the resourceVersion a replace checks. */
function secretBody(secret: {
  readonly name: string;
  readonly namespace: string;
  readonly type: string;
  readonly data: SecretBytes;
  readonly resourceVersion: string | undefined;
}): object {
  const { name, namespace, type, data, resourceVersion } = secret;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: LABELS, ...(resourceVersion ? { resourceVersion } : {}) },
    type,
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, value.toString('base64')]),
    ),
  };
}

function decodeData(data: Record<string, string> | undefined): SecretBytes {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
  );
}
