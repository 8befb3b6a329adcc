// One AdmissionReview sent by hand, as the apiserver would send it: the checks
// that a webhook answers the bench workload before any load or timed write.

import https from 'node:https';

export interface ReviewAnswer {
  readonly allowed: boolean;
  /** The decoded JSON patch ('' when there is none). */
  readonly patch: string;
  /** The raw answer, for error messages. */
  readonly text: string;
}

export function postReview(url: string, body: string, ca: string): Promise<ReviewAnswer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' }, timeout: 30_000 },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => {
          try {
            const answer = (
              JSON.parse(text) as { response?: { allowed?: boolean; patch?: string } }
            ).response;
            resolve({
              allowed: answer?.allowed === true,
              patch: answer?.patch ? Buffer.from(answer.patch, 'base64').toString() : '',
              text,
            });
          } catch {
            reject(
              new Error(`${url} answered what is not an AdmissionReview: ${text.slice(0, 300)}`),
            );
          }
        });
      },
    );
    request.on('error', reject);
    request.on('timeout', () => request.destroy(new Error(`${url}: no answer in 30 s`)));
    request.end(body);
  });
}

/** Throws unless `url` allows the review with a patch that writes `annotation`. */
export async function checkReview(
  url: string,
  body: string,
  ca: string,
  annotation: string,
): Promise<void> {
  const answer = await postReview(url, body, ca);
  // A JSON patch path escapes '/' as '~1'; a patch of the whole annotations map has it plain.
  const written = [annotation, annotation.replace('/', '~1')].some((key) =>
    answer.patch.includes(key),
  );
  if (!answer.allowed || !written) {
    throw new Error(
      `${url} did not answer with a patch of ${annotation}: ${answer.text.slice(0, 300)}`,
    );
  }
}
