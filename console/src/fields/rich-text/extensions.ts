import { Node, mergeAttributes, ReactNodeViewRenderer, type Extensions } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { TableKit } from '@tiptap/extension-table';
import { assetIdOfMediaUrl, embedPlayerUrl, isSafeHref, UNSUPPORTED_NODE } from '@annals/rich-text';
import { EmbedView, ImageView, UnsupportedView } from './node-views.tsx';

/**
 * The editor's extensions: exactly the nodes, marks and attributes of the rich-text model
 * (src/domain/content/rich-text/rich-text-model.ts), so that what the API accepts shows in full and what the
 * editor writes is accepted: StarterKit (paragraphs, headings, lists, quotes, code blocks, rules, hard breaks,
 * bold, italic, strike, underline, code, links), tables, images from the media library and YouTube/Vimeo embeds,
 * plus the unsupported block that stands for content stored before the model (never part of it). StarterKit's
 * trailing paragraph is off: opening a document must not change it.
 */
export function richTextExtensions(): Extensions {
  return [
    StarterKit.configure({
      trailingNode: false,
      link: {
        openOnClick: false,
        autolink: true,
        defaultProtocol: 'https',
        // Only what the model allows, whatever is pasted or typed.
        isAllowedUri: (url) => isSafeHref(url),
        shouldAutoLink: (url) => isSafeHref(url),
        HTMLAttributes: { target: null, rel: 'noopener noreferrer nofollow', class: null },
      },
    }),
    TableKit.configure({ table: { resizable: false, allowTableNodeSelection: false } }),
    LibraryImage,
    VideoEmbed,
    UnsupportedBlock,
  ];
}

/** An image from the media library: its asset id, alt text and title (no address: the service serves it). */
const LibraryImage = Node.create({
  name: 'image',
  group: 'block',
  atom: true,
  draggable: true,
  addAttributes() {
    return {
      assetId: { default: null },
      alt: { default: null },
      title: { default: null },
    };
  },
  parseHTML() {
    return [
      {
        tag: 'img[src]',
        getAttrs: (element) => {
          const assetId = assetIdOfMediaUrl(element.getAttribute('src') ?? '');
          return assetId ? { assetId, alt: element.getAttribute('alt'), title: element.getAttribute('title') } : false;
        },
      },
    ];
  },
  renderHTML({ HTMLAttributes }) {
    return ['img', mergeAttributes({ 'data-asset-id': HTMLAttributes['assetId'], alt: HTMLAttributes['alt'] ?? '' })];
  },
  addNodeView() {
    return ReactNodeViewRenderer(ImageView);
  },
});

/** A YouTube or Vimeo video, by the address the video_embed field takes. */
const VideoEmbed = Node.create({
  name: 'embed',
  group: 'block',
  atom: true,
  draggable: true,
  addAttributes() {
    return { src: { default: null }, title: { default: null } };
  },
  parseHTML() {
    return [
      {
        tag: 'iframe[src]',
        getAttrs: (element) => {
          const src = element.getAttribute('src') ?? '';
          return embedPlayerUrl(src) ? { src, title: element.getAttribute('title') } : false;
        },
      },
    ];
  },
  renderHTML({ HTMLAttributes }) {
    return ['div', { 'data-embed': HTMLAttributes['src'] }];
  },
  addNodeView() {
    return ReactNodeViewRenderer(EmbedView);
  },
});

/** Content stored before the model, kept untouched (attrs.original) and shown read-only. */
const UnsupportedBlock = Node.create({
  name: UNSUPPORTED_NODE,
  group: 'block',
  atom: true,
  selectable: true,
  draggable: false,
  addAttributes() {
    return { original: { default: null, rendered: false }, whole: { default: null, rendered: false } };
  },
  parseHTML() {
    return [];
  },
  renderHTML() {
    return ['div', { 'data-unsupported': '' }];
  },
  addNodeView() {
    return ReactNodeViewRenderer(UnsupportedView);
  },
});
