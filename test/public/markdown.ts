import type { Token } from 'marked';

/** Walks every token of a marked token tree, nested ones included (list items, links, emphasis). */
export function* allTokens(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = (token as { tokens?: Token[] }).tokens;
    if (nested) yield* allTokens(nested);
    const items = (token as { items?: Token[] }).items;
    if (items) yield* allTokens(items);
  }
}

/** The text a reader sees for these inline tokens: escapes as the characters they stand for. */
export function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((token) => {
      const nested = (token as { tokens?: Token[] }).tokens;
      if (nested && nested.length > 0) return plainText(nested);
      return (token as { text?: string }).text ?? token.raw;
    })
    .join('');
}
