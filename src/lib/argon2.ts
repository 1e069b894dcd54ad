/**
 * Argon2 (hash-wasm's WebAssembly build) computed off the main thread: a
 * check with privacyIDEA's parameters takes a core for about a second, which
 * would otherwise stall every other request of the process.
 *
 * @module
 */
import { argon2d, argon2i, argon2id } from "hash-wasm";

/** One job: the Argon2 variant and hash-wasm's options. */
export interface Argon2Job {
  variant: "id" | "i" | "d";
  password: Uint8Array;
  salt: Uint8Array;
  iterations: number;
  memorySize: number;
  parallelism: number;
  hashLength: number;
}

/** Computes the raw Argon2 output of a job on this thread. */
export async function argon2Raw(job: Argon2Job): Promise<Uint8Array> {
  const fn = job.variant === "id" ? argon2id : job.variant === "i" ? argon2i : argon2d;
  const { variant: _, ...options } = job;
  return await fn({ ...options, outputType: "binary" });
}

/**
 * Runs one Argon2 job in a short-lived worker, so the event loop keeps serving
 * requests; where no worker can start (e.g. a compiled binary built without
 * `argon2_worker.ts`) it runs on this thread.
 */
export async function argon2OffThread(job: Argon2Job): Promise<Uint8Array> {
  let worker: Worker;
  try {
    worker = new Worker(new URL("./argon2_worker.ts", import.meta.url).href, { type: "module" });
  } catch {
    return await argon2Raw(job);
  }
  try {
    return await new Promise<Uint8Array>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<{ out?: Uint8Array; error?: string }>) =>
        e.data.out ? resolve(e.data.out) : reject(new Error(e.data.error));
      worker.onerror = (e) => {
        e.preventDefault();
        argon2Raw(job).then(resolve, reject);
      };
      worker.postMessage(job);
    });
  } finally {
    worker.terminate();
  }
}
