export {
  type ConfigMapData,
  contentOfConfigMap,
  contentOfSecret,
  type SecretData,
} from './content.js';
export { computeHash, encodeSources, encodeToBuffer } from './encode.js';
export { HashMemo } from './memo.js';
export type {
  EncodedValue,
  HashInput,
  SourceContent,
} from './types.js';
export {
  type DigestKey,
  deriveNamespaceKey,
  ENCODING_HEADERS,
  type HashVersion,
  NAMESPACE_KEY_HEADER,
  type NamespaceKey,
  NamespaceKeys,
  v1DigestKey,
  v2DigestKey,
} from './versions.js';
