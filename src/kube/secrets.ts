// The SecretStore port of self-managed certificates (src/certs/self-managed.ts)
// over the API, through the one request path of client.ts. 404 and 409 are
// outcomes, checked by status code; anything else is an error with a one-line
// reason.

import type { SecretData, SecretStore } from '../certs/self-managed.js';
import { describeFailure, FIELD_MANAGER_QUERY, isStatus, requestJson } from './client.js';
import type { ApiConnection } from './connection.js';

const LABELS = {
  'app.kubernetes.io/name': 'confighash',
  'app.kubernetes.io/managed-by': 'confighash',
};

interface Secret {
  metadata?: { resourceVersion?: string };
  data?: Record<string, string>;
}

export function createSecretStore(connection: ApiConnection, namespace: string): SecretStore {
  const collection = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const item = (name: string) => `${collection}/${encodeURIComponent(name)}`;
  const body = (name: string, type: string, data: SecretData, resourceVersion?: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels: LABELS, ...(resourceVersion ? { resourceVersion } : {}) },
    type,
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, value.toString('base64')]),
    ),
  });
  return {
    namespace,
    async read(name) {
      try {
        const secret = await requestJson<Secret>(connection, { method: 'GET', path: item(name) });
        return {
          data: decodeData(secret.data),
          resourceVersion: secret.metadata?.resourceVersion ?? '',
        };
      } catch (error) {
        if (isStatus(error, 404)) return undefined;
        throw describeFailure(error, `read Secret ${namespace}/${name}`);
      }
    },
    async create(name, type, data) {
      try {
        await requestJson(connection, {
          method: 'POST',
          path: `${collection}?${FIELD_MANAGER_QUERY}`,
          body: body(name, type, data),
        });
        return 'created';
      } catch (error) {
        if (isStatus(error, 409)) return 'exists';
        throw describeFailure(error, `create Secret ${namespace}/${name}`);
      }
    },
    async replace(name, type, data, resourceVersion) {
      try {
        await requestJson(connection, {
          method: 'PUT',
          path: `${item(name)}?${FIELD_MANAGER_QUERY}`,
          body: body(name, type, data, resourceVersion),
        });
        return 'replaced';
      } catch (error) {
        if (isStatus(error, 409)) return 'conflict';
        throw describeFailure(error, `update Secret ${namespace}/${name}`);
      }
    },
  };
}

function decodeData(data: Record<string, string> | undefined): SecretData {
  return Object.fromEntries(
    Object.entries(data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
  );
}
