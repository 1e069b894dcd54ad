/**
 * A real FreeRADIUS server (Debian package `freeradius`) on a loopback port,
 * for testing Tessera's outgoing RADIUS client against a peer nobody here
 * wrote. Users: "nönäscii"/"passwörd" (PAP); "challenge" gets an
 * Access-Challenge (Reply-Message "Please enter OTP", State "123456") and is
 * accepted with "287082" when that State comes back.
 *
 * @module
 */
import dgram from "node:dgram";

async function available(): Promise<boolean> {
  try {
    await new Deno.Command("freeradius", { args: ["-v"], stdout: "null", stderr: "null" })
      .output();
    return true;
  } catch {
    return false;
  }
}

/** True when the FreeRADIUS server binary can be run. */
export const HAS_FREERADIUS: boolean = await available();
if (!HAS_FREERADIUS) {
  console.warn(
    "SKIPPING FreeRADIUS server tests: freeradius not found (apt-get install freeradius)",
  );
}

/** A running FreeRADIUS server. */
export interface FreeRadius {
  port: number;
  secret: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = dgram.createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function config(dir: string, port: number, secret: string): string {
  return `prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = /usr/sbin
logdir = ${dir}
raddbdir = ${dir}
radacctdir = ${dir}
name = freeradius
confdir = \${raddbdir}
modconfdir = \${confdir}
run_dir = ${dir}
libdir = /usr/lib/freeradius
pidfile = \${run_dir}/radiusd.pid
max_request_time = 30
cleanup_delay = 5
max_requests = 1024
hostname_lookups = no
log {
	destination = stderr
}
security {
	allow_core_dumps = no
	reject_delay = 0
}
client loopback {
	ipaddr = 127.0.0.1
	secret = ${secret}
}
modules {
	pap {
		normalise = yes
	}
	files {
		filename = \${confdir}/users
	}
	always handled {
		rcode = handled
	}
}
server default {
	listen {
		type = auth
		ipaddr = 127.0.0.1
		port = ${port}
	}
	authorize {
		if (&User-Name == "challenge") {
			if (!&State) {
				update reply {
					&Reply-Message := "Please enter OTP"
					&State := 0x313233343536
				}
				update control {
					&Response-Packet-Type := Access-Challenge
				}
				handled
			}
			elsif (&State == 0x313233343536) {
				update control {
					&Cleartext-Password := "287082"
				}
			}
		}
		files
		pap
	}
	authenticate {
		Auth-Type PAP {
			pap
		}
	}
}
`;
}

/** Starts FreeRADIUS in debug mode on a free loopback port and waits until it is ready. */
export async function startFreeRadius(secret = "testing123"): Promise<FreeRadius> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-freeradius-" });
  const port = await freePort();
  await Deno.writeTextFile(`${dir}/radiusd.conf`, config(dir, port, secret));
  await Deno.writeTextFile(`${dir}/dictionary`, "$INCLUDE /usr/share/freeradius/dictionary\n");
  await Deno.writeTextFile(`${dir}/users`, '"nönäscii" Cleartext-Password := "passwörd"\n');
  const child = new Deno.Command("freeradius", {
    args: ["-X", "-d", dir],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let log = "";
  const deadline = Date.now() + 15_000;
  while (!log.includes("Ready to process requests") && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    log += value;
  }
  // keep draining so the debug output never blocks the server
  const drained = (async () => {
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch {
      // cancelled on stop
    }
  })();
  const stderr = child.stderr.pipeTo(new WritableStream());
  if (!log.includes("Ready to process requests")) {
    child.kill("SIGKILL");
    await child.status;
    throw new Error(`FreeRADIUS did not start:\n${log.slice(-2000)}`);
  }
  return {
    port,
    secret,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await drained;
      await stderr.catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
