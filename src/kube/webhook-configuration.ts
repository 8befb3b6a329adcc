// The CaBundleTarget port of self-managed certificates: sets the caBundle of
// every webhook in our MutatingWebhookConfiguration through client-node's typed
// AdmissionregistrationV1Api, with a JSON patch that tests each webhook's name
// at its index, so a configuration reordered in between fails the patch
// instead of receiving a caBundle in the wrong place.

import {
  AdmissionregistrationV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { CaBundleTarget } from '../certs/self-managed.js';
import { describeApiError } from './secrets.js';

const FIELD_MANAGER = 'confighash';

export function createCaBundleTarget(kubeConfig: KubeConfig): CaBundleTarget {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  return {
    async ensure(name, caBundle) {
      const wanted = Buffer.from(caBundle).toString('base64');
      let webhooks: { name: string; caBundle?: string }[];
      try {
        const configuration = await api.readMutatingWebhookConfiguration({ name });
        webhooks = (configuration.webhooks ?? []).map((webhook) => ({
          name: webhook.name,
          caBundle: webhook.clientConfig.caBundle,
        }));
      } catch (error) {
        throw describeApiError(error, `read MutatingWebhookConfiguration ${name}`);
      }
      const operations = webhooks.flatMap((webhook, index) =>
        webhook.caBundle === wanted
          ? []
          : [
              { op: 'test', path: `/webhooks/${index}/name`, value: webhook.name },
              { op: 'add', path: `/webhooks/${index}/clientConfig/caBundle`, value: wanted },
            ],
      );
      if (operations.length === 0) return 'unchanged';
      try {
        await api.patchMutatingWebhookConfiguration(
          { name, body: operations, fieldManager: FIELD_MANAGER },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
      } catch (error) {
        throw describeApiError(error, `patch MutatingWebhookConfiguration ${name}`);
      }
      return 'patched';
    },
  };
}
