/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Typed form fields: one input per field as the server describes it (a checkbox for a flag, a
 * list for a choice, a number with its limits, a password field for a secret), each with its
 * help text, so the policy, event, resolver and system forms are built from descriptions instead
 * of raw text boxes.
 *
 * @module
 */
import { Check, Field, Select, TextArea } from "./ui.tsx";
import type { FieldSpec } from "./specs/field_spec.ts";

export type { FieldSpec } from "./specs/field_spec.ts";

/** Whether a stored flag reads as true (`1`, `true`, `True`, `yes`, `on`). */
export function isOn(value: string | undefined): boolean {
  return ["1", "true", "yes", "on"].includes((value ?? "").trim().toLowerCase());
}

/** The input of one field; every value is text, a flag is its `bool` pair's on or off text. */
export function TypedField(
  props: {
    spec: FieldSpec;
    value: string;
    onValue: (v: string) => void;
    disabled?: boolean;
  },
) {
  const { spec, value, onValue } = props;
  const label = spec.label ?? spec.key;
  const hint = spec.help;
  switch (spec.type) {
    case "bool": {
      const [on, off] = spec.bool ?? ["1", "0"];
      return (
        <Check
          label={label}
          hint={hint}
          checked={isOn(value)}
          disabled={props.disabled}
          onChecked={(checked) => onValue(checked ? on : off)}
        />
      );
    }
    case "select": {
      const options = [...(spec.options ?? [])];
      // a stored value the list does not know stays visible (and is kept) rather than vanishing
      if (value !== "" && !options.some((o) => (Array.isArray(o) ? o[0] : o) === value)) {
        options.push([value, `${value} (stored)`]);
      }
      return (
        <Select
          label={label}
          hint={hint}
          value={value}
          onValue={onValue}
          options={options}
          required={spec.required}
          disabled={props.disabled}
        />
      );
    }
    case "multi": {
      const sep = spec.separator ?? " ";
      const set = value.split(sep.trim() || " ").map((x) => x.trim()).filter((x) => x !== "");
      return (
        <fieldset class="multi">
          <legend>{label}</legend>
          {hint && <small class="help">{hint}</small>}
          {(spec.options ?? []).map((o) => {
            const [v, text] = Array.isArray(o) ? o : [o, o];
            return (
              <Check
                key={v}
                label={text}
                checked={set.includes(v)}
                disabled={props.disabled}
                onChecked={(checked) =>
                  onValue((checked ? [...set, v] : set.filter((y) => y !== v)).join(sep))}
              />
            );
          })}
        </fieldset>
      );
    }
    case "textarea":
    case "json":
      return (
        <TextArea
          label={label}
          hint={hint}
          value={value}
          onValue={onValue}
          rows={spec.rows ?? 3}
          required={spec.required}
          placeholder={spec.placeholder}
          disabled={props.disabled}
        />
      );
    case "int":
      return (
        <Field
          label={label}
          hint={hint}
          type="number"
          inputMode="numeric"
          min={spec.min}
          max={spec.max}
          step={spec.step ?? 1}
          value={value}
          onValue={onValue}
          required={spec.required}
          disabled={props.disabled}
          placeholder={spec.placeholder}
        />
      );
    default:
      return (
        <Field
          label={label}
          hint={hint}
          type={spec.type === "password" ? "password" : spec.type === "url" ? "url" : "text"}
          value={value}
          onValue={onValue}
          required={spec.required}
          disabled={props.disabled}
          autoComplete={spec.type === "password" ? "new-password" : "off"}
          placeholder={spec.placeholder}
          wide={spec.wide}
        />
      );
  }
}

/** The fields of `specs` whose condition (`showIf`) holds for `values`. */
export function visibleSpecs(specs: FieldSpec[], values: Record<string, string>): FieldSpec[] {
  return specs.filter((s) => !s.showIf || s.showIf(values));
}
