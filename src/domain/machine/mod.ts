/**
 * Machines (spec 07): machine resolvers, machine queries, machine-token
 * bindings and the authentication items of the ssh, luks and offline
 * applications.
 *
 * @module
 */
export type { Machine, MachineFilter, MachineResolverType, MachineSource } from "./types.ts";
export {
  deleteMachineResolver,
  listMachineResolvers,
  MACHINE_RESOLVER_TYPES,
  openResolvers,
  type ResolverView,
  saveMachineResolver,
  testMachineResolver,
} from "./resolvers.ts";
export { hostsFilePath, normalizeIp, parseHosts } from "./hosts.ts";
export {
  listMachines,
  type MachineQuery,
  type MachineRef,
  machineRefOf,
  type MachineView,
  resolveHostname,
} from "./machines.ts";
export {
  ANY_HOST,
  ANY_MACHINE,
  APPLICATIONS,
  attachToken,
  type BindingQuery,
  detachBinding,
  detachToken,
  type FilterViewItem,
  listBindings,
  NO_RESOLVER,
  type OptionRequest,
  optionValues,
  setBindingOptions,
  type TokenViewItem,
} from "./bindings.ts";
export { type MangleContext, mangleParams } from "./mangle.ts";
export { type AuthItem, type AuthItemRequest, getAuthItems } from "./auth_items.ts";
export {
  computerNameOf,
  DEFAULT_COUNT,
  DEFAULT_ROUNDS,
  hasOfflineBinding,
  offlineAuthItems,
  offlineRefill,
  type RefillRequest,
} from "./offline.ts";
export {
  type ApplicationOptions,
  applicationOptions,
  type OptionDescriptor,
} from "./applications.ts";
export { pbkdf2Sha512Hash, pbkdf2Sha512Verify } from "./_pbkdf2.ts";
