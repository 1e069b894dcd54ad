/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * CA connectors (`/caconnector/`, admin rights `caconnectorread`, `caconnectorwrite` and
 * `caconnectordelete`): the local CAs certificate tokens are issued by, with the files the CA is
 * read from once and its CRL periods.
 *
 * @module
 */
import { type DefinitionKind, DefinitionsPage, itemPath } from "./definitions.tsx";

/** A connector as `GET /caconnector/` lists it. */
interface CaConnector {
  connectorname: string;
  type: string;
  data: Record<string, string>;
}

const CA_CONNECTORS: DefinitionKind = {
  title: "CA connectors",
  noun: "CA connector",
  listPath: "/caconnector/",
  itemPath: itemPath("/caconnector/"),
  fields: {
    local: [
      { key: "cakey", label: "CA key file (PEM)", required: true },
      { key: "cacert", label: "CA certificate file (PEM)", required: true },
      { key: "WorkingDir", label: "CA directory (serial, index.txt; relative paths)" },
      { key: "templates", label: "Templates file (YAML)" },
      { key: "CRL_Validity_Period", label: "CRL validity (days)", type: "number" },
      { key: "CRL_Overlap_Period", label: "CRL overlap (days)", type: "number" },
    ],
  },
  columns: [
    { key: "type", label: "Type" },
    { key: "cacert", label: "CA certificate file" },
  ],
  readRight: "caconnectorread",
  writeRight: "caconnectorwrite",
  deleteRight: "caconnectordelete",
  listOf: (value) =>
    Object.fromEntries(
      (value as CaConnector[]).map((c) => [c.connectorname, { ...c.data, type: c.type }]),
    ),
};

/** `#/caconnectors`. */
export function CaConnectorsPage() {
  return <DefinitionsPage kind={CA_CONNECTORS} />;
}
