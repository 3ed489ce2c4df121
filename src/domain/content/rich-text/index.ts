/**
 * The rich-text model and what reads it, in one folder of pure TypeScript that imports nothing from outside
 * itself: the service validates and sanitises with it, and the console's editor imports it (through the
 * `@annals/rich-text` alias of console/vite.config.ts and console/tsconfig.json), so both read one definition.
 */
export { RICH_TEXT_LIMITS, NODE_RULES, MARK_RULES, NODE_TYPES, MARK_TYPES, BLOCK_TYPES, INLINE_TYPES, attrProblem, type AttrRule, type NodeRule, type MarkRule, type ContentRule } from './rich-text-model.ts';
export { checkRichText, formatPath, isValidBlock, isValidShell, MAX_PROBLEMS, type RichTextPath, type RichTextProblem } from './rich-text-check.ts';
export { sanitiseRichText, type RichTextNode } from './rich-text-sanitise.ts';
export { withUnsupportedBlocks, withoutUnsupportedBlocks, hasUnsupportedBlocks, UNSUPPORTED_NODE, type UnsupportedAttrs } from './rich-text-unsupported.ts';
export { checkHtmlTree, htmlElementVerdict, assetIdOfMediaUrl, HTML_ELEMENTS, HTML_OF_MODEL, HTML_DROPPED_WITH_CONTENT, type HtmlTreeAdapter, type HtmlVerdict } from './rich-text-html.ts';
export { isSafeHref, HREF_MAX_LENGTH } from './safe-href.ts';
export { embedPlayerUrl } from './embed-url.ts';
