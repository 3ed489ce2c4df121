import { useEffect, useMemo, useRef, useState, type FormEvent, type RefObject } from 'react';
import { EditorContent, useEditor, useEditorState, type ChainedCommands, type Editor, type JSONContent } from '@tiptap/react';
import { NodeSelection, TextSelection } from '@tiptap/pm/state';
import { embedPlayerUrl, isSafeHref, withoutUnsupportedBlocks, withUnsupportedBlocks, type RichTextNode } from '@annals/rich-text';
import { checkHtmlValue } from '@annals/rich-text/rich-text-html-parse.ts';
import { useI18n } from '../i18n/i18n.tsx';
import { Modal } from '../components/modal.tsx';
import { MediaPicker } from './media-picker.tsx';
import { richTextExtensions } from './rich-text/extensions.ts';
import { Toolbar, type ToolbarHandle, type ToolbarItem } from './rich-text/toolbar.tsx';
import { useReadOnlyFields } from './read-only.tsx';

/**
 * The tiptap field: a TipTap editor of the rich-text model (src/domain/content/rich-text/, imported as
 * @annals/rich-text), loaded on demand (React.lazy) so the console's first load does not carry it. TipTap's own
 * <style> injection is off: the console's CSP allows no inline style; its styles are in styles.css.
 *
 * The stored value is shown in full: a document's blocks that break the model (stored before it) stand as
 * unsupported blocks holding the original, and are saved back exactly as they were; an HTML value that holds
 * only the model's elements is edited (and saved as a document once changed), any other as one unsupported
 * block. The editor is created after the component has mounted (immediatelyRender: false): created during
 * render, TipTap destroys an instance whose component has not mounted a millisecond later, which a lazily
 * loaded editor under Suspense often has not; the page then called commands on the destroyed instance
 * ("Cannot read properties of null (reading 'commands')", issue 44).
 */
export default function RichTextEditor({ id, value, onChange, labelledBy, describedBy }: { id: string; value: unknown; onChange: (doc: unknown) => void; labelledBy: string; describedBy?: string }) {
  const { t } = useI18n();
  const toolbar = useRef<ToolbarHandle>(null);
  // The value the editor shows now, as stored: what it was opened with, or last emitted.
  const shown = useRef<unknown>(value);
  const extensions = useMemo(() => richTextExtensions(), []);
  // A role that reads the entry only: the text shows, and takes no typing.
  const readOnly = useReadOnlyFields();
  const editor = useEditor({
    extensions,
    editable: !readOnly,
    content: toEditorContent(value),
    injectCSS: false,
    immediatelyRender: false,
    editorProps: {
      attributes: {
        id,
        role: 'textbox',
        'aria-multiline': 'true',
        ...(readOnly ? { 'aria-readonly': 'true' } : {}),
        'aria-labelledby': labelledBy,
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
        class: 'rich-text',
      },
      handleKeyDown: (_view, event) => {
        // Alt+F10: to the toolbar, as in other editors.
        if (event.altKey && event.key === 'F10') {
          event.preventDefault();
          toolbar.current?.focus();
          return true;
        }
        return false;
      },
    },
    onUpdate: ({ editor: e }) => {
      const next = e.isEmpty ? undefined : withoutUnsupportedBlocks(e.getJSON() as RichTextNode);
      shown.current = next;
      onChange(next);
    },
  });
  // Another locale's value, a reloaded revision or a merge replaces the content, without echoing an update.
  useEffect(() => {
    if (!editor || editor.isDestroyed || sameValue(value, shown.current)) return;
    shown.current = value;
    editor.commands.setContent(toEditorContent(value), { emitUpdate: false });
  }, [editor, value]);
  if (!editor) return <p className="muted">{t('field.richTextLoading')}</p>;
  return (
    <div className="rich-text-field">
      <RichTextToolbar editor={editor} toolbar={toolbar} />
      <EditorContent editor={editor} />
    </div>
  );
}

type Dialog = 'link' | 'embed' | 'image' | 'alt' | null;

function RichTextToolbar({ editor, toolbar }: { editor: Editor; toolbar: RefObject<ToolbarHandle | null> }) {
  const { t } = useI18n();
  const [dialog, setDialog] = useState<Dialog>(null);
  const state = useEditorState({
    editor,
    selector: ({ editor: e }) => ({
      paragraph: e.isActive('paragraph'),
      h2: e.isActive('heading', { level: 2 }),
      h3: e.isActive('heading', { level: 3 }),
      bold: e.isActive('bold'),
      italic: e.isActive('italic'),
      underline: e.isActive('underline'),
      strike: e.isActive('strike'),
      code: e.isActive('code'),
      link: e.isActive('link'),
      bulletList: e.isActive('bulletList'),
      orderedList: e.isActive('orderedList'),
      blockquote: e.isActive('blockquote'),
      codeBlock: e.isActive('codeBlock'),
      table: e.isActive('table'),
      image: e.isActive('image'),
      headerRow: e.can().toggleHeaderRow(),
      canUndo: e.can().undo(),
      canRedo: e.can().redo(),
    }),
  });
  /**
   * Runs a command and puts the focus back in the text at once. Not with TipTap's focus() command: it focuses
   * again a frame later, which took the focus back from the toolbar when Alt+F10 came within that frame.
   */
  const act = (command: (chain: ChainedCommands) => ChainedCommands) => () => {
    command(editor.chain()).run();
    editor.view.focus();
  };
  /** A block goes where the cursor is, or after the selected image, embed or block (never over it). */
  const insertBlock = (node: JSONContent) => {
    const { selection } = editor.state;
    act((c) => (selection instanceof NodeSelection ? c.insertContentAt(selection.to, node) : c.insertContent(node)))();
  };
  const close = () => {
    setDialog(null);
    editor.view.focus();
  };
  const items: ToolbarItem[] = [
    { label: t('rt.undo'), text: '↶', run: act((c) => c.undo()), disabled: !state.canUndo },
    { label: t('rt.redo'), text: '↷', run: act((c) => c.redo()), disabled: !state.canRedo },
    { label: t('rt.paragraph'), text: '¶', group: true, pressed: state.paragraph, run: act((c) => c.setParagraph()) },
    { label: t('rt.heading2'), text: 'H2', pressed: state.h2, run: act((c) => c.toggleHeading({ level: 2 })) },
    { label: t('rt.heading3'), text: 'H3', pressed: state.h3, run: act((c) => c.toggleHeading({ level: 3 })) },
    { label: t('rt.bold'), text: 'B', group: true, pressed: state.bold, run: act((c) => c.toggleBold()) },
    { label: t('rt.italic'), text: 'I', pressed: state.italic, run: act((c) => c.toggleItalic()) },
    { label: t('rt.underline'), text: 'U', pressed: state.underline, run: act((c) => c.toggleUnderline()) },
    { label: t('rt.strike'), text: 'S', pressed: state.strike, run: act((c) => c.toggleStrike()) },
    { label: t('rt.code'), text: '</>', pressed: state.code, run: act((c) => c.toggleCode()) },
    { label: t('rt.link'), text: t('rt.linkShort'), pressed: state.link, run: () => setDialog('link') },
    { label: t('rt.bulletList'), text: '•', group: true, pressed: state.bulletList, run: act((c) => c.toggleBulletList()) },
    { label: t('rt.orderedList'), text: '1.', pressed: state.orderedList, run: act((c) => c.toggleOrderedList()) },
    { label: t('rt.quote'), text: '❝', pressed: state.blockquote, run: act((c) => c.toggleBlockquote()) },
    { label: t('rt.codeBlock'), text: '{ }', pressed: state.codeBlock, run: act((c) => c.toggleCodeBlock()) },
    { label: t('rt.rule'), text: '―', run: act((c) => c.setHorizontalRule()) },
    { label: t('rt.image'), text: t('rt.imageShort'), group: true, run: () => setDialog('image') },
    { label: t('rt.embed'), text: '▶', run: () => setDialog('embed') },
    { label: t('rt.table'), text: '▦', run: act((c) => c.insertTable({ rows: 3, cols: 3, withHeaderRow: true })) },
    ...(state.image ? [{ label: t('rt.imageAltEdit'), text: 'Alt', group: true, run: () => setDialog('alt') }] : []),
    ...(state.table
      ? [
          { label: t('rt.rowAfter'), text: '+↓', group: true, run: act((c) => c.addRowAfter()) },
          { label: t('rt.columnAfter'), text: '+→', run: act((c) => c.addColumnAfter()) },
          { label: t('rt.deleteRow'), text: '−↓', run: act((c) => c.deleteRow()) },
          { label: t('rt.deleteColumn'), text: '−→', run: act((c) => c.deleteColumn()) },
          { label: t('rt.headerRow'), text: 'TH', run: act((c) => c.toggleHeaderRow()), disabled: !state.headerRow },
          { label: t('rt.deleteTable'), text: '✕▦', run: act((c) => c.deleteTable()) },
        ]
      : []),
  ];
  return (
    <>
      <Toolbar ref={toolbar} label={t('field.formatting')} items={items} onLeave={() => editor.view.focus()} />
      {dialog === 'link' && <LinkDialog editor={editor} onClose={close} />}
      {dialog === 'embed' && (
        <AddressDialog
          title={t('rt.embed')}
          label={t('rt.embedAddress')}
          check={(url) => (embedPlayerUrl(url) ? null : t('rt.embedInvalid'))}
          onApply={(src) => {
            setDialog(null);
            insertBlock({ type: 'embed', attrs: { src, title: null } });
          }}
          onClose={close}
        />
      )}
      {dialog === 'alt' && <AltDialog editor={editor} onClose={close} />}
      <MediaPicker
        open={dialog === 'image'}
        kind="image"
        onClose={close}
        onPick={(asset) => {
          setDialog(null);
          insertBlock({ type: 'image', attrs: { assetId: asset.id, alt: asset.altText || null, title: null } });
        }}
      />
    </>
  );
}

/** The address of a link on the selected text (or the link the cursor is in); only the model's safe schemes. */
function LinkDialog({ editor, onClose }: { editor: Editor; onClose: () => void }) {
  const { t } = useI18n();
  const current = (editor.getAttributes('link')['href'] as string | undefined) ?? '';
  return (
    <AddressDialog
      title={t('rt.link')}
      label={t('rt.linkAddress')}
      initial={current}
      check={(href) => (isSafeHref(href) ? null : t('rt.linkInvalid'))}
      onApply={(href) => {
        const chain = editor.chain().focus().extendMarkRange('link');
        if (editor.state.selection.empty && !editor.isActive('link')) chain.insertContent({ type: 'text', text: href, marks: [{ type: 'link', attrs: { href } }] }).run();
        // The cursor goes after the link, where typing goes on unlinked.
        else
          chain
            .setLink({ href })
            .command(({ tr }) => {
              tr.setSelection(TextSelection.near(tr.doc.resolve(tr.selection.to)));
              return true;
            })
            .run();
        onClose();
      }}
      {...(current
        ? {
            onRemove: () => {
              editor.chain().focus().extendMarkRange('link').unsetLink().run();
              onClose();
            },
          }
        : {})}
      onClose={onClose}
    />
  );
}

/** A dialog asking one address, checked before it is applied. */
function AddressDialog({ title, label, initial = '', check, onApply, onRemove, onClose }: { title: string; label: string; initial?: string; check: (value: string) => string | null; onApply: (value: string) => void; onRemove?: () => void; onClose: () => void }) {
  const { t } = useI18n();
  const [value, setValue] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = value.trim();
    const problem = check(trimmed);
    if (problem) setError(problem);
    else onApply(trimmed);
  };
  return (
    <Modal open title={title} onClose={onClose}>
      <form onSubmit={submit}>
        <label>
          {label}
          {/* biome-ignore lint/a11y/noAutofocus: the dialog opens on the user's asking for it, to type this address. */}
          <input type="text" inputMode="url" value={value} autoFocus aria-invalid={error ? true : undefined} aria-describedby={error ? 'address-error' : undefined} onChange={(e) => setValue(e.target.value)} />
        </label>
        {error && (
          <p id="address-error" className="error" role="alert">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          {onRemove && (
            <button type="button" onClick={onRemove}>
              {t('rt.linkRemove')}
            </button>
          )}
          <button type="button" onClick={onClose}>
            {t('action.cancel')}
          </button>
          <button type="submit" className="primary">
            {t('rt.apply')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The alt text of the selected image. */
function AltDialog({ editor, onClose }: { editor: Editor; onClose: () => void }) {
  const { t } = useI18n();
  const [alt, setAlt] = useState((editor.getAttributes('image')['alt'] as string | null) ?? '');
  return (
    <Modal open title={t('rt.imageAltEdit')} onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          editor.chain().focus().updateAttributes('image', { alt: alt.trim() || null }).run();
          onClose();
        }}
      >
        <label>
          {t('media.altText')}
          {/* biome-ignore lint/a11y/noAutofocus: the dialog opens on the user's asking for it, to type this text. */}
          <input type="text" value={alt} maxLength={1000} autoFocus onChange={(e) => setAlt(e.target.value)} />
        </label>
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('action.cancel')}
          </button>
          <button type="submit" className="primary">
            {t('rt.apply')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/**
 * Whether an HTML value holds only the model's elements and attributes: read as the service reads it
 * (htmlparser2), never by the page's DOM, which would report the CSP refusing a hostile value's event handlers.
 */
function htmlFitsModel(html: string): boolean {
  return checkHtmlValue(html, 1).length === 0;
}

/** What the editor opens: a document (with unsupported blocks standing for what breaks the model), or HTML it can read in full. */
function toEditorContent(value: unknown): JSONContent | string {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value === 'string' && htmlFitsModel(value)) return value;
  return withUnsupportedBlocks(value).doc as JSONContent;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
