/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Service IDs (`/serviceid/`, admin rights `serviceid_list`, `serviceid_add` and
 * `serviceid_delete`): the named services SSH keys and application-specific passwords are for.
 *
 * @module
 */
import { type DefinitionKind, DefinitionsPage, itemPath } from "./definitions.tsx";

const SERVICE_IDS: DefinitionKind = {
  title: "Service IDs",
  noun: "service ID",
  listPath: "/serviceid/",
  itemPath: itemPath("/serviceid/"),
  fields: { "": [{ key: "description", label: "Description" }] },
  columns: [{ key: "description", label: "Description" }],
  readRight: "serviceid_list",
  writeRight: "serviceid_add",
  deleteRight: "serviceid_delete",
};

/** `#/serviceids`. */
export function ServiceIdsPage() {
  return <DefinitionsPage kind={SERVICE_IDS} />;
}
