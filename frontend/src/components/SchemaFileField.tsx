import { useState, type ChangeEvent } from 'react';
import { readFileField } from '../lib/fileField';
import { fieldHint, type SchemaField } from '../lib/schemaFields';
import { Field } from './Field';

interface Props {
  field: SchemaField;
  path: string;
  /** The base64 text the field holds ('' when no file is chosen). */
  value: string;
  /** The name of the file the value came from, when known. */
  fileName: string | undefined;
  error: string | undefined;
  onChange: (value: string, fileName: string | undefined) => void;
}

/** A base64 field of a payload schema (`contentEncoding: "base64"`) as a file input. */
export function SchemaFileField({ field, path, value, fileName, error, onChange }: Props) {
  const [fileError, setFileError] = useState<string | null>(null);
  const chosen = fileName ? ` Chosen: ${fileName}.` : value ? ' A file is chosen.' : '';
  const hint = `${fieldHint(field) ?? ''}${chosen}`.trim();

  const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setFileError(null);
    if (!file) {
      onChange('', undefined);
      return;
    }
    const read = await readFileField(field, file);
    if ('error' in read) {
      setFileError(read.error);
      onChange('', undefined);
      return;
    }
    onChange(read.value, file.name);
  };

  return (
    <Field
      path={path}
      label={field.label}
      hint={hint || undefined}
      error={fileError ?? error}
      required={field.required && !field.nullable}
    >
      {(p) => <input {...p} type="file" accept={field.mediaType} onChange={(e) => void onFile(e)} />}
    </Field>
  );
}
