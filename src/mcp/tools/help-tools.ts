import { z } from 'zod';
import { HELP_ARTICLE_ID } from '../../help/help-article.ts';
import { defineTool, READ_ONLY, type ToolDefinition } from '../tool-kit.ts';
import { ToolFailure } from '../tool-result.ts';

/** The admin help (docs/help): search, read, ask. They need no service call. */
export const helpTools: ToolDefinition[] = [
  defineTool({
    name: 'search_admin_help',
    title: 'Search the admin help',
    description:
      'Ranked full-text search (BM25) over the admin help: how the service works (getting started, the revision workflow, webhooks, media, contact forms, locales and translation, keys and scopes, blueprints and masters, errors and limits, this MCP server). Works in English and Japanese. Returns the best sections: {results: [{articleId, articleTitle, sectionId, heading, score, excerpt}], articles: [{id, title}]}. Read a whole article with get_admin_help_article; for a direct question, ask_admin_help quotes the relevant passages.',
    input: {
      query: z.string().min(1).max(500).describe('Words to look for, e.g. "schedule publish" or "公開 予約".'),
      limit: z.number().int().min(1).max(20).optional().describe('Results at most, default 5.'),
    },
    output: z.object({
      query: z.string(),
      results: z.array(z.object({ articleId: z.string(), articleTitle: z.string(), sectionId: z.string(), heading: z.string(), score: z.number(), excerpt: z.string() })),
      note: z.string().optional().describe('When nothing matched.'),
      articles: z.array(z.object({ id: z.string(), title: z.string() })),
    }),
    annotations: READ_ONLY,
    run: async (args, { help }) => {
      const results = help.search(args.query, args.limit ?? 5).map(({ section: _s, ...hit }) => hit);
      return { query: args.query, results, ...(results.length === 0 ? { note: 'Nothing matched; try other words.' } : {}), articles: help.list().map(({ id, title }) => ({ id, title })) };
    },
  }),

  defineTool({
    name: 'get_admin_help_article',
    title: 'Read a help article',
    description:
      'Returns one admin help article in Markdown, by id (the ids are listed by search_admin_help, e.g. "getting-started", "workflow", "webhooks", "media", "contact-forms", "locales", "keys-and-scopes", "mcp"): {id, title, summary, sections: [{id, heading}], markdown}. An unknown id is a NOT_FOUND error listing the ids.',
    input: { id: z.string().min(1).max(100).describe('The article id, e.g. "workflow".') },
    output: z.object({ id: z.string(), title: z.string(), summary: z.string(), sections: z.array(z.object({ id: z.string(), heading: z.string() })), markdown: z.string() }),
    annotations: READ_ONLY,
    run: async (args, { help }) => {
      const article = HELP_ARTICLE_ID.test(args.id) ? help.get(args.id) : undefined;
      if (!article) {
        throw new ToolFailure('NOT_FOUND', `No help article ${JSON.stringify(args.id)}.`, `The articles are: ${help.list().map((a) => a.id).join(', ')}.`, 404);
      }
      return { id: article.id, title: article.title, summary: article.summary, sections: article.sections.map((s) => ({ id: s.id, heading: s.heading })), markdown: article.markdown };
    },
  }),

  defineTool({
    name: 'ask_admin_help',
    title: 'Ask the admin help',
    description:
      'Answers a question about using the service with the most relevant passages of the admin help, quoted as written (nothing is made up), each with its article id and section: {answer (Markdown), passages: [{articleId, sectionId, heading, text}], articleIds}. Ask in English or Japanese, e.g. "How do I schedule a publish?" or "Why does my content key get FORBIDDEN?".',
    input: { question: z.string().min(1).max(1000).describe('The question.') },
    output: z.object({
      question: z.string(),
      answer: z.string().describe('The passages in Markdown, each followed by its source, or a note that nothing matched.'),
      passages: z.array(z.object({ articleId: z.string(), articleTitle: z.string(), sectionId: z.string(), heading: z.string(), score: z.number(), text: z.string() })),
      articleIds: z.array(z.string()),
    }),
    annotations: READ_ONLY,
    run: async (args, { help }) => help.ask(args.question),
  }),
];
