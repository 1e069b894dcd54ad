/**
 * The description of one form field, as the typed forms (`typed.tsx`) render it. Plain data, so
 * the field lists can be checked against the server's own lists by Deno tests.
 *
 * @module
 */

/** How a field is entered. */
export type FieldType =
  | "bool"
  | "int"
  | "text"
  | "url"
  | "textarea"
  | "json"
  | "password"
  | "select"
  | "multi"
  /** An HTTP endpoint configuration (method, endpoint, headers, mappings): a JSON object. */
  | "endpoint"
  /** A JSON object of the sub-fields in `fields`. */
  | "object";

/** One field of a typed form. */
export interface FieldSpec {
  /** The parameter (or configuration key) the value is sent as. */
  key: string;
  /** The visible label (default: the key). */
  label?: string;
  type: FieldType;
  /** Help text under the field. */
  help?: string;
  /** The choices of `select` and `multi`: values or [value, text]. */
  options?: (string | [string, string])[];
  /** Limits of `int`; `step` "any" allows fractions. */
  min?: number;
  max?: number;
  step?: number | "any";
  /** The sub-fields of an `object`. */
  fields?: FieldSpec[];
  required?: boolean;
  /** The stored texts of a `bool` when on and off (default `1`, `0`). */
  bool?: [string, string];
  /** How `multi` values are joined (default a space). */
  separator?: string;
  /** Rows of a `textarea` or `json` field. */
  rows?: number;
  placeholder?: string;
  /** The field takes a whole row. */
  wide?: boolean;
  /** The value used when nothing is stored. */
  default?: string;
  /** A heading the field is grouped under. */
  group?: string;
  /** Shown only when this holds for the form's values. */
  showIf?: (values: Record<string, string>) => boolean;
}
