// The CaBundleTarget port of self-managed certificates: sets the caBundle of
// every webhook in our MutatingWebhookConfiguration, through the one request
// path of client.ts, with a JSON patch that tests each webhook's name at its
// index, so a configuration reordered in between fails the patch instead of
// receiving a caBundle in the wrong place.

import type { CaBundleTarget } from '../certs/ports.js';
import { describeFailure, FIELD_MANAGER_QUERY, requestJson } from './client.js';
import type { ApiConnection } from './connection.js';

interface WebhookConfiguration {
  webhooks?: { name: string; clientConfig?: { caBundle?: string } }[];
}

export function createCaBundleTarget(connection: ApiConnection): CaBundleTarget {
  const path = (name: string) =>
    `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(name)}`;
  return {
    async ensure(name, caBundle) {
      const wanted = Buffer.from(caBundle).toString('base64');
      let configuration: WebhookConfiguration;
      try {
        configuration = await requestJson(connection, { method: 'GET', path: path(name) });
      } catch (error) {
        throw describeFailure(error, `read MutatingWebhookConfiguration ${name}`);
      }
      const operations = (configuration.webhooks ?? []).flatMap((webhook, index) =>
        webhook.clientConfig?.caBundle === wanted
          ? []
          : [
              { op: 'test', path: `/webhooks/${index}/name`, value: webhook.name },
              { op: 'add', path: `/webhooks/${index}/clientConfig/caBundle`, value: wanted },
            ],
      );
      if (operations.length === 0) return 'unchanged';
      try {
        await requestJson(connection, {
          method: 'PATCH',
          path: `${path(name)}?${FIELD_MANAGER_QUERY}`,
          body: operations,
          contentType: 'application/json-patch+json',
        });
      } catch (error) {
        throw describeFailure(error, `patch MutatingWebhookConfiguration ${name}`);
      }
      return 'patched';
    },
  };
}
