import { useState, type ChangeEvent } from 'react';
import type { JobType } from '../api/types';
import { MAX_IMAGE_BYTES, sniffImage, type FieldErrors, type PayloadValues } from '../lib/jobForm';
import { Field, FieldErrorText } from './Field';

interface Props {
  type: JobType;
  values: PayloadValues;
  onChange: (values: PayloadValues) => void;
  errors: FieldErrors;
  /** API path prefix of the payload: `payload` or `jobTemplate.payload`. */
  prefix?: string;
}


function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/** The payload fields of each job type (rules: libs/common/src/jobs_common/payloads.py). */
export function PayloadFields({ type, values, onChange, errors, prefix = 'payload' }: Props) {
  const at = (name: string) => `${prefix}.${name}`;
  const [fileError, setFileError] = useState<string | null>(null);

  switch (type) {
    case 'email': {
      const v = values.email;
      const set = (patch: Partial<typeof v>) => onChange({ ...values, email: { ...v, ...patch } });
      return (
        <>
          <Field path={at('to')} label="To" error={errors[at('to')]}>
            {(p) => (
              <input {...p} type="email" autoComplete="off" value={v.to} onChange={(e) => set({ to: e.target.value })} />
            )}
          </Field>
          <Field path={at('subject')} label="Subject" hint="1 to 200 characters" error={errors[at('subject')]}>
            {(p) => <input {...p} value={v.subject} maxLength={400} onChange={(e) => set({ subject: e.target.value })} />}
          </Field>
          <Field path={at('body')} label="Body" error={errors[at('body')]}>
            {(p) => <textarea {...p} value={v.body} onChange={(e) => set({ body: e.target.value })} />}
          </Field>
        </>
      );
    }
    case 'image_resize': {
      const v = values.image_resize;
      const set = (patch: Partial<typeof v>) =>
        onChange({ ...values, image_resize: { ...v, ...patch } });
      const onFile = async (event: ChangeEvent<HTMLInputElement>) => {
        const file = event.target.files?.[0];
        setFileError(null);
        if (!file) {
          set({ imageBase64: '', fileName: '' });
          return;
        }
        if (file.size > MAX_IMAGE_BYTES) {
          setFileError('The image must be at most 5 MB');
          set({ imageBase64: '', fileName: '' });
          return;
        }
        const bytes = new Uint8Array(await file.arrayBuffer());
        if (!sniffImage(bytes)) {
          setFileError('The file must be a PNG, JPEG or WebP image');
          set({ imageBase64: '', fileName: '' });
          return;
        }
        set({ imageBase64: toBase64(bytes), fileName: file.name });
      };
      const imageError = fileError ?? errors[at('imageBase64')];
      return (
        <>
          <Field
            path={at('imageBase64')}
            label="Image"
            hint={v.fileName ? `Selected: ${v.fileName}` : 'PNG, JPEG or WebP, at most 5 MB'}
            error={imageError}
          >
            {(p) => (
              <input {...p} type="file" accept="image/png,image/jpeg,image/webp" onChange={(e) => void onFile(e)} />
            )}
          </Field>
          <div className="field-row">
            <Field path={at('width')} label="Width (px)" hint="1 to 10,000" error={errors[at('width')]}>
              {(p) => (
                <input {...p} inputMode="numeric" value={v.width} onChange={(e) => set({ width: e.target.value })} />
              )}
            </Field>
            <Field path={at('height')} label="Height (px)" hint="1 to 10,000" error={errors[at('height')]}>
              {(p) => (
                <input {...p} inputMode="numeric" value={v.height} onChange={(e) => set({ height: e.target.value })} />
              )}
            </Field>
            <Field path={at('format')} label="Output format" error={errors[at('format')]}>
              {(p) => (
                <select
                  {...p}
                  value={v.format}
                  onChange={(e) => set({ format: e.target.value as typeof v.format })}
                >
                  <option value="">Same as the source</option>
                  <option value="png">PNG</option>
                  <option value="jpeg">JPEG</option>
                  <option value="webp">WebP</option>
                </select>
              )}
            </Field>
          </div>
        </>
      );
    }
    case 'report_generation': {
      const v = values.report_generation;
      const set = (patch: Partial<typeof v>) =>
        onChange({ ...values, report_generation: { ...v, ...patch } });
      return (
        <>
          <p className="muted">Report: jobs summary (counts, success rate, run times).</p>
          <div className="field-row">
            <Field path={at('from')} label="From date" hint="Optional, inclusive" error={errors[at('from')]}>
              {(p) => <input {...p} type="date" value={v.from} onChange={(e) => set({ from: e.target.value })} />}
            </Field>
            <Field path={at('to')} label="To date" hint="Optional, inclusive" error={errors[at('to')]}>
              {(p) => <input {...p} type="date" value={v.to} onChange={(e) => set({ to: e.target.value })} />}
            </Field>
            <Field path={at('format')} label="Format" error={errors[at('format')]}>
              {(p) => (
                <select {...p} value={v.format} onChange={(e) => set({ format: e.target.value as typeof v.format })}>
                  <option value="csv">CSV</option>
                  <option value="json">JSON</option>
                </select>
              )}
            </Field>
          </div>
        </>
      );
    }
    case 'simulate': {
      const v = values.simulate;
      const set = (patch: Partial<typeof v>) => onChange({ ...values, simulate: { ...v, ...patch } });
      return (
        <>
          <p className="muted">
            Demo work: may fail at once, else runs between min and max seconds, then fails with the
            failure rate. Empty fields take the defaults (0.2, 0.5, 1 s, 4 s).
          </p>
          <div className="field-row">
            <Field
              path={at('immediateFailureRate')}
              label="Immediate failure rate"
              hint="0 to 1"
              error={errors[at('immediateFailureRate')]}
            >
              {(p) => (
                <input
                  {...p}
                  inputMode="decimal"
                  value={v.immediateFailureRate}
                  onChange={(e) => set({ immediateFailureRate: e.target.value })}
                />
              )}
            </Field>
            <Field path={at('failureRate')} label="Failure rate" hint="0 to 1" error={errors[at('failureRate')]}>
              {(p) => (
                <input {...p} inputMode="decimal" value={v.failureRate} onChange={(e) => set({ failureRate: e.target.value })} />
              )}
            </Field>
          </div>
          <div className="field-row">
            <Field path={at('minSeconds')} label="Min seconds" hint="0 to 300" error={errors[at('minSeconds')]}>
              {(p) => (
                <input {...p} inputMode="decimal" value={v.minSeconds} onChange={(e) => set({ minSeconds: e.target.value })} />
              )}
            </Field>
            <Field path={at('maxSeconds')} label="Max seconds" hint="0 to 300" error={errors[at('maxSeconds')]}>
              {(p) => (
                <input {...p} inputMode="decimal" value={v.maxSeconds} onChange={(e) => set({ maxSeconds: e.target.value })} />
              )}
            </Field>
            <Field path={at('seed')} label="Seed" hint="Optional whole number: same seed, same outcome" error={errors[at('seed')]}>
              {(p) => <input {...p} inputMode="numeric" value={v.seed} onChange={(e) => set({ seed: e.target.value })} />}
            </Field>
          </div>
          {errors[prefix] ? <FieldErrorText path={prefix} error={errors[prefix]} /> : null}
        </>
      );
    }
  }
}
