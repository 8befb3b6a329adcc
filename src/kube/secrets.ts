// The SecretStore port of self-managed certificates over client-node's typed
// CoreV1Api. These calls are rare (start-up and an hourly check), so
// client-node's own transport is fine here; the hot path uses connection.ts.
// 404 and 409 are outcomes, checked by status code; anything else is an error
// with a one-line reason.

import { ApiException, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { SecretData, SecretStore } from '../certs/self-managed.js';

const FIELD_MANAGER = 'confighash';
const LABELS = {
  'app.kubernetes.io/name': 'confighash',
  'app.kubernetes.io/managed-by': 'confighash',
};

export function createSecretStore(kubeConfig: KubeConfig, namespace: string): SecretStore {
  const api = kubeConfig.makeApiClient(CoreV1Api);
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
        const secret = await api.readNamespacedSecret({ name, namespace });
        const data = Object.fromEntries(
          Object.entries(secret.data ?? {}).map(([key, value]) => [
            key,
            Buffer.from(value, 'base64'),
          ]),
        );
        return { data, resourceVersion: secret.metadata?.resourceVersion ?? '' };
      } catch (error) {
        if (statusOf(error) === 404) return undefined;
        throw describeApiError(error, `read Secret ${namespace}/${name}`);
      }
    },
    async create(name, type, data) {
      try {
        await api.createNamespacedSecret({
          namespace,
          body: body(name, type, data),
          fieldManager: FIELD_MANAGER,
        });
        return 'created';
      } catch (error) {
        if (statusOf(error) === 409) return 'exists';
        throw describeApiError(error, `create Secret ${namespace}/${name}`);
      }
    },
    async replace(name, type, data, resourceVersion) {
      try {
        await api.replaceNamespacedSecret({
          name,
          namespace,
          body: body(name, type, data, resourceVersion),
          fieldManager: FIELD_MANAGER,
        });
        return 'replaced';
      } catch (error) {
        if (statusOf(error) === 409) return 'conflict';
        throw describeApiError(error, `update Secret ${namespace}/${name}`);
      }
    },
  };
}

export function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

/** client-node's ApiException message carries the whole response; keep one line of it. */
export function describeApiError(error: unknown, doing: string): Error {
  if (error instanceof ApiException) {
    let detail = '';
    try {
      const status = JSON.parse(String(error.body)) as { message?: unknown };
      if (typeof status.message === 'string') detail = `: ${status.message}`;
    } catch {
      // Not a Status object: the code says enough.
    }
    return new Error(`cannot ${doing}: HTTP ${error.code}${detail}`);
  }
  const cause = error as Error & { code?: string };
  return new Error(`cannot ${doing}: ${cause.code ?? cause.message}`);
}
