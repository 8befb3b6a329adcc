// Turns API objects into SourceContent. Only data counts: metadata, labels,
// `type`, `immutable` and resourceVersion never change the hash.

import type { EncodedValue, SourceContent } from './source-content.js';

interface ConfigMapData {
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

/**
 * The encoder declares a base64 value's length as `Buffer.byteLength(text,
 * 'base64')`, computed from the text alone, and feeds HMAC the decoded bytes.
 * The API always sends canonical base64, where the two agree; anything else
 * (whitespace, stray characters) is re-encoded here so the length prefix stays
 * true. Checking exactly that — decode, compare the count — is native and
 * costs far less than validating the text with a regular expression, which costs more
 * than the SHA-256 itself (BENCHMARKS.md has the figures).
 */
function canonicalBase64(text: string): string {
  const declared = Buffer.byteLength(text, 'base64');
  const decoded = Buffer.allocUnsafe(declared);
  const written = decoded.write(text, 'base64');
  return written === declared ? text : decoded.subarray(0, written).toString('base64');
}
