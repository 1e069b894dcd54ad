/**
 * Option descriptors of the machine applications (`GET /application/`, spec 07 §4.6).
 *
 * @module
 */

/** One option of an application for one token type. */
export interface OptionDescriptor {
  type: "int" | "str";
  description?: string;
  value?: (string | number)[];
}

/** Per application: `options` by token type, then by option name. */
export type ApplicationOptions = Record<
  string,
  { options: Record<string, Record<string, OptionDescriptor>> }
>;

/**
 * The options each application understands per token type. `serviceIds` are
 * the defined service id names offered for the ssh `service_id` option.
 */
export function applicationOptions(serviceIds: string[] = []): ApplicationOptions {
  return {
    luks: {
      options: {
        totp: {
          slot: { type: "int", value: [0, 1, 2, 3, 4, 5, 6, 7] },
          partition: { type: "str" },
        },
      },
    },
    offline: {
      options: {
        hotp: { count: { type: "str" }, rounds: { type: "str" } },
        webauthn: {},
        passkey: {},
      },
    },
    ssh: {
      options: {
        sshkey: {
          user: { type: "str", description: "The username on the SSH server." },
          service_id: {
            type: "str",
            description: "The service ID of the SSH server. " +
              "Several servers can have the same service ID.",
            value: serviceIds,
          },
        },
      },
    },
  };
}
