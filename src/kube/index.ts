// The Kubernetes adapters, for main.ts: every port's implementation over the API server.

export { createApiConfigSource } from './api-config-source.js';
export {
  type ApiConnection,
  type ClusterCredentials,
  connectToCluster,
  type ExchangeRecord,
  loadCredentials,
} from './connection.js';
export {
  childProcessResolver,
  KubeconfigError,
  type KubeconfigSelection,
} from './credentials.js';
export { createFollowApi } from './follow-api.js';
export { createLeaseStore } from './lease-store.js';
export { createNamespaceApi } from './namespace-api.js';
export { checkReachable, createExplainCluster, type LeaseLocation } from './plan-cluster.js';
export { createSecretStore } from './secrets.js';
export { createKeeperApi } from './snapshot-keeper-api.js';
export { createSnapshotStore } from './snapshot-store.js';
export { writeFanoutControl } from './source-annotation.js';
export { createCaBundleTarget } from './webhook-configuration.js';
