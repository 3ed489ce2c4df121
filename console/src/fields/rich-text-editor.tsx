import { useEffect } from 'react';
import { EditorContent, useEditor } from '@tiptap/react';
import StarterKit from '@tiptap/starter-kit';
import { useI18n } from '../i18n/i18n.tsx';

/**
 * The tiptap field: a TipTap editor producing the rich-text document (JSON) the API stores. Loaded on
 * demand (React.lazy) so the console's first load does not carry it. TipTap's own <style> injection is
 * off: the console's CSP allows no inline style; its styles are in styles.css.
 */
export default function RichTextEditor({ id, value, onChange, labelledBy, describedBy }: { id: string; value: unknown; onChange: (doc: unknown) => void; labelledBy: string; describedBy?: string }) {
  const { t } = useI18n();
  const editor = useEditor({
    extensions: [StarterKit],
    content: (value as object | string | undefined) ?? '',
    injectCSS: false,
    immediatelyRender: true,
    editorProps: {
      attributes: {
        id,
        role: 'textbox',
        'aria-multiline': 'true',
        'aria-labelledby': labelledBy,
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
        class: 'rich-text',
      },
    },
    onUpdate: ({ editor: e }) => onChange(e.isEmpty ? undefined : e.getJSON()),
  });
  // Another locale's value or a reloaded revision replaces the content, without echoing an update.
  useEffect(() => {
    if (!editor) return;
    const current = JSON.stringify(editor.getJSON());
    if (value && typeof value === 'object' && JSON.stringify(value) !== current) editor.commands.setContent(value as object, { emitUpdate: false });
    if (!value && !editor.isEmpty) editor.commands.setContent('', { emitUpdate: false });
  }, [editor, value]);
  if (!editor) return null;
  const tool = (label: string, active: boolean, run: () => void) => (
    <button type="button" aria-pressed={active} onClick={run}>
      {label}
    </button>
  );
  return (
    <div className="rich-text-field">
      <div className="toolbar" role="toolbar" aria-label={t('field.formatting')}>
        {tool(t('field.bold'), editor.isActive('bold'), () => editor.chain().focus().toggleBold().run())}
        {tool(t('field.italic'), editor.isActive('italic'), () => editor.chain().focus().toggleItalic().run())}
        {tool(t('field.heading'), editor.isActive('heading', { level: 2 }), () => editor.chain().focus().toggleHeading({ level: 2 }).run())}
        {tool(t('field.bulletList'), editor.isActive('bulletList'), () => editor.chain().focus().toggleBulletList().run())}
        {tool(t('field.orderedList'), editor.isActive('orderedList'), () => editor.chain().focus().toggleOrderedList().run())}
      </div>
      <EditorContent editor={editor} />
    </div>
  );
}
