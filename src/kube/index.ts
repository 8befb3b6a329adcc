export { createApiConfigSource } from './api-config-source.js';
export type { ConfigSource, LookupFailure, LookupResult } from './config-source.js';
export { type ApiConnection, connectToCluster } from './connection.js';
