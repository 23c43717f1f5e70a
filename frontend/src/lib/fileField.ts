/**
 * A file chosen for a payload field whose schema says `contentEncoding: "base64"` (a built-in
 * type's image, or any type's upload): its size is checked before it is read (the
 * largest file whose base64 fits the field's `maxLength`), then its base64 text is checked as
 * any string of the field is (lengths, `pattern` with its `x-pattern-message`), so a file the
 * schema refuses is refused when it is chosen.
 */
import { formatBytes, maxFileBytes, type SchemaField } from './schemaFields';
import { readText } from './schemaForm';

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

async function bytesOf(file: Blob): Promise<Uint8Array> {
  if (typeof file.arrayBuffer === 'function') return new Uint8Array(await file.arrayBuffer());
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(new Uint8Array(reader.result as ArrayBuffer));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read'));
    reader.readAsArrayBuffer(file);
  });
}

/** The base64 text of `file` for `field`, or why the field refuses it. */
export async function readFileField(field: SchemaField, file: Blob): Promise<{ value: string } | { error: string }> {
  const limit = maxFileBytes(field);
  if (limit !== undefined && file.size > limit) return { error: `The file must be at most ${formatBytes(limit)}` };
  let text: string;
  try {
    text = toBase64(await bytesOf(file));
  } catch (error) {
    return { error: error instanceof Error ? error.message : 'The file could not be read' };
  }
  const read = readText(field, text);
  return 'error' in read ? read : { value: text };
}
