/** A batch of texts to translate from one locale into another. */
export interface TranslationRequest {
  texts: string[];
  /** A content locale code: en, ja, pt-BR. */
  sourceLocale: string;
  targetLocale: string;
  /** The texts are HTML fragments: tags and attributes must come back untouched. */
  html: boolean;
}

/** Translates texts; the answer has one text per input text, in the same order. */
export interface TranslationProvider {
  translate(request: TranslationRequest): Promise<string[]>;
}

export type TranslationFailure =
  /** The SSRF guard refused the provider's address. */
  | 'refused'
  /** No connection, or it broke. */
  | 'unreachable'
  | 'timeout'
  /** The provider answered with a status other than 2xx. */
  | 'rejected'
  /** The provider's answer is not the documented shape. */
  | 'invalid-response';

/** A provider call that failed; the message names the host, never the key, path or query. */
export class TranslationProviderError extends Error {
  override name = 'TranslationProviderError';
  constructor(
    readonly failure: TranslationFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}
