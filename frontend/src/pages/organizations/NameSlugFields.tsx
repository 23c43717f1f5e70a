import { InputField } from '../../components/Field';

const NAME_MAX = 200;
const SLUG_MAX = 48;

/** The name and slug of an organization or a project, side by side: one row in the create and
 * rename forms, with the API's limits and the field errors of `<prefix>.name` / `<prefix>.slug`. */
export function NameSlugFields({
  prefix,
  nameLabel,
  slugLabel,
  slugHint,
  name,
  slug,
  onName,
  onSlug,
  errors,
}: {
  prefix: string;
  nameLabel: string;
  slugLabel: string;
  slugHint: string;
  name: string;
  slug: string;
  onName: (value: string) => void;
  onSlug: (value: string) => void;
  errors: Record<string, string>;
}) {
  return (
    <div className="field-row">
      <InputField
        path={`${prefix}.name`}
        label={nameLabel}
        error={errors[`${prefix}.name`]}
        value={name}
        maxLength={NAME_MAX}
        onChange={onName}
      />
      <InputField
        path={`${prefix}.slug`}
        label={slugLabel}
        hint={slugHint}
        error={errors[`${prefix}.slug`]}
        className="mono"
        value={slug}
        maxLength={SLUG_MAX}
        autoComplete="off"
        spellCheck={false}
        onChange={onSlug}
      />
    </div>
  );
}
