/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Importing a token seed file (`POST /token/load/<filename>`, admin right `importtokens`):
 * OATH CSV, Yubikey CSV, PSKC (with its pre-shared key or password and the MAC check) or
 * Aladdin XML, into the chosen token realms; the answer's counts and refused serials shown.
 *
 * @module
 */
import { useState } from "preact/hooks";
import { get, seg, upload } from "../api.ts";
import { hasRight, useSession } from "../session.ts";
import {
  Check,
  Field,
  Form,
  href,
  LoadState,
  Outcome,
  Page,
  Panel,
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";

const FILE_TYPES: [string, string][] = [
  ["oathcsv", "OATH CSV"],
  ["yubikeycsv", "Yubikey CSV"],
  ["pskc", "PSKC"],
  ["aladdin-xml", "Aladdin XML"],
];

const MAC_MODES: [string, string][] = [
  ["check_fail_hard", "A wrong MAC refuses the whole file"],
  ["check_fail_soft", "A wrong MAC leaves out that token"],
  ["no_check", "Do not check the MAC"],
];

const HELP: Record<string, string> = {
  oathcsv: "One token a line: serial, key (hex), type (e.g. hotp, totp), OTP length, time step. " +
    "With '# version: 2' first, each line starts with user, resolver, realm.",
  yubikeycsv: "The CSV the YubiKey Personalization Tool writes.",
  pskc: "An RFC 6030 key container; encrypted keys need the pre-shared key or the password.",
  "aladdin-xml": "The XML file of Aladdin/SafeNet eToken PASS tokens.",
};

/** What `POST /token/load` answers. */
interface Loaded {
  n_imported: number;
  n_not_imported: number;
  unauthorized?: string[];
}

/** `#/import`. */
export function ImportPage() {
  const { session } = useSession();
  const allowed = hasRight(session, "importtokens");
  const realms = useLoad(
    () => allowed ? get<Record<string, unknown>>("/realm/") : Promise.resolve({}),
    [],
  );
  const [type, setType] = useState("oathcsv");
  const [file, setFile] = useState<File | undefined>();
  const [chosen, setChosen] = useState<string[]>([]);
  const [psk, setPsk] = useState("");
  const [password, setPassword] = useState("");
  const [macMode, setMacMode] = useState("check_fail_hard");
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const act = useAction();
  if (!allowed) {
    return <p class="error" role="alert">You are not allowed to import tokens.</p>;
  }
  const names = Object.keys(realms.data ?? {}).sort();
  return (
    <Page title="Import tokens" actions={<a href={href(["tokens"])}>Back to tokens</a>}>
      <Panel title="Token file">
        <Form
          label="Import tokens"
          onSubmit={() =>
            act.run(async () => {
              if (!file) throw new Error("Choose a file");
              const form = new FormData();
              form.set("type", type);
              form.set("file", file, file.name);
              if (chosen.length > 0) form.set("tokenrealms", chosen.join(","));
              if (type === "pskc") {
                if (psk) form.set("psk", psk);
                if (password) form.set("password", password);
                form.set("pskcValidateMAC", macMode);
              }
              setLoaded(undefined);
              const r = await upload<Loaded>(`/token/load/${seg(file.name)}`, form);
              setLoaded(r.value);
              return `${r.value.n_imported} imported, ${r.value.n_not_imported} not imported`;
            })}
        >
          <Select
            label="File type"
            value={type}
            onValue={setType}
            options={FILE_TYPES}
            hint={HELP[type]}
          />
          <div class="field wide">
            <label for="import-file">Token file</label>
            <input
              id="import-file"
              type="file"
              required
              onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0])}
            />
          </div>
          {type === "pskc" && (
            <>
              <Field
                label="Pre-shared key (hex)"
                value={psk}
                onValue={setPsk}
                autoComplete="off"
                hint="32 hex digits, for keys encrypted with a pre-shared key."
              />
              <Field
                label="Password"
                type="password"
                value={password}
                onValue={setPassword}
                autoComplete="off"
                hint="For keys encrypted with a password (PBKDF2)."
              />
              <Select
                label="MAC check"
                value={macMode}
                onValue={setMacMode}
                options={MAC_MODES}
              />
            </>
          )}
          <fieldset class="multi">
            <legend>Token realms</legend>
            <small class="help">
              The imported tokens are put into these realms.
            </small>
            <LoadState error={realms.error} loading={realms.loading && !realms.data} />
            {realms.data && names.length === 0 && <p class="muted">There is no realm yet.</p>}
            {names.map((n) => (
              <Check
                key={n}
                label={n}
                checked={chosen.includes(n)}
                onChecked={(on) => setChosen(on ? [...chosen, n] : chosen.filter((x) => x !== n))}
              />
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" class="primary" disabled={act.busy}>Import</button>
          </div>
          <Outcome error={act.error} note={act.note} />
        </Form>
        {loaded?.unauthorized && loaded.unauthorized.length > 0 && (
          <p class="error">
            Not imported, as they are tokens you may not change: {loaded.unauthorized.join(", ")}
          </p>
        )}
        {loaded && loaded.n_imported > 0 && (
          <p>
            <a href={href(["tokens"])}>Show the tokens</a>
          </p>
        )}
      </Panel>
    </Page>
  );
}
