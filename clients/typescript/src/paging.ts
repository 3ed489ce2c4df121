/** A page of an admin list: its items and the cursor of the next page (null on the last). */
export interface Page<Item> {
  items: Item[];
  nextCursor: string | null;
}

/**
 * Every page of a cursor-paged list, from the first (or the one at `cursor`) to the last: `fetchPage` is
 * asked for each with the previous page's nextCursor. Stops when the caller breaks out.
 */
export async function* pagesOf<P extends Page<unknown>>(fetchPage: (cursor: string | undefined) => Promise<P>, cursor?: string): AsyncGenerator<P, void, undefined> {
  let next: string | undefined = cursor;
  do {
    const page = await fetchPage(next);
    yield page;
    next = page.nextCursor ?? undefined;
  } while (next !== undefined);
}

/** Every item of a cursor-paged list, page after page, fetched as the caller iterates. */
export async function* itemsOf<Item>(fetchPage: (cursor: string | undefined) => Promise<Page<Item>>, cursor?: string): AsyncGenerator<Item, void, undefined> {
  for await (const page of pagesOf(fetchPage, cursor)) yield* page.items;
}
