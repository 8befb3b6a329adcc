export { createApiConfigSource } from './api-config-source.js';
export { type ApiConnection, connectToCluster } from './connection.js';
