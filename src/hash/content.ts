// Turns API objects into SourceContent. Only data counts: metadata, labels,
// `type`, `immutable` and resourceVersion never change the hash.

import type { EncodedValue, SourceContent } from './types.js';

export interface ConfigMapData {
  readonly data?: Readonly<Record<string, string>> | null;
  readonly binaryData?: Readonly<Record<string, string>> | null;
}

export interface SecretData {
  readonly data?: Readonly<Record<string, string>> | null;
}

export function contentOfConfigMap(configMap: ConfigMapData): SourceContent {
  const content = new Map<string, EncodedValue>();
  addAll(content, configMap.data, 'utf8');
  addAll(content, configMap.binaryData, 'base64');
  return content;
}

export function contentOfSecret(secret: SecretData): SourceContent {
  const content = new Map<string, EncodedValue>();
  addAll(content, secret.data, 'base64');
  return content;
}

function addAll(
  into: Map<string, EncodedValue>,
  values: Readonly<Record<string, string>> | null | undefined,
  encoding: EncodedValue['encoding'],
): void {
  if (!values) return;
  for (const [key, text] of Object.entries(values)) {
    if (typeof text !== 'string') continue;
    into.set(key, { text: encoding === 'base64' ? canonicalBase64(text) : text, encoding });
  }
}

const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The encoder takes a base64 value's length from its text, which is exact only
 * for canonical base64. The API always sends that; anything else (whitespace,
 * missing padding) is re-encoded here so the length prefix stays true.
 */
function canonicalBase64(text: string): string {
  return CANONICAL_BASE64.test(text) ? text : Buffer.from(text, 'base64').toString('base64');
}
