#!/usr/bin/env python3
"""The soak test's orchestrator (docs/reliability.md "Soak").

Run it through benches/soak, which builds the binaries, copies them into the
scratch directory, gives this script that directory and removes it (and any
process left) at the end. Two modes:

- default: mwrouterd on three DPDK memif ports (HR 0x0101 and 0x0102 face
  mwgen as in benches/e2e Part 2; HR 0x0103 faces a second mwrouterd, the
  buddy, whose other HRs advertise RTs for SANs 0x0204-0x0207). A short NDR
  search, then mwgen at 90 % of the NDR for --minutes while the buddy flaps
  (its port down and up with mwctl, or killed and restarted), `mwctl reload`
  runs with a changed configuration and captures start and stop. Then the
  accounting: per port received = forwarded + dropped + punted, mwgen's loss
  against the router's drop counters, RSS, log lines per minute.
- --lab: mwlab's Appendix B lab on loopback UDP with every host's receive
  side impaired (loss, duplication, reordering), hosts sending probes for
  --minutes while a transit router's ports flap, routers reload and
  captures run; then the accounting on every router and the probes' loss
  against the impairment's and the routers' counters.

Every process is started in its own session and its pid written to
DIR/pids (benches/soak kills what is left there by pid). Exit status: 0 every
check passed, 1 a check failed, 2 the run could not be made.
"""

import argparse
import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

# The wiring of benches/e2e Part 2 (benches/src/e2e/mod.rs `addr`), and the
# buddy's SAN.
ROUTER_A_MAC = "02:00:00:00:01:01"
ROUTER_B_MAC = "02:00:00:00:01:02"
ROUTER_C_MAC = "02:00:00:00:01:03"
GEN_A_MAC = "02:00:00:00:01:30"
GEN_B_MAC = "02:00:00:00:02:30"
BUDDY_MAC = "02:00:00:00:03:01"
NODE_A, NODE_B = 0x0130, 0x0230
BUDDY_HR = 0x0301
# The static entry the reloads add and remove on HR 0x0103's SAN.
TOGGLED_NODE = 0x0331
# The buddy's SANs behind it: (HR, SAN, static node).
BUDDY_FAR = [(0x0401, 0x0204, 0x0430), (0x0501, 0x0205, 0x0530),
             (0x0601, 0x0206, 0x0630), (0x0701, 0x0207, 0x0730)]

# The lab's timers (tools/mwlab/src/plan.rs LabTimers): fast, so that a flap
# is noticed within half a second and RTs come back within one.
TIMERS = dict(sweep_ms=300, keepalive_ms=150, keepalive_misses=3, refresh_ms=3000,
              hold_ms=9000, advertise_ms=50, fib_ms=20, tombstone_ms=1500)

DROP_REASONS_GEN_PATH_OK = {"tx-full"}

ANSI = re.compile(rb"\x1b\[[0-9;]*m")


class Failure(Exception):
    """The run cannot go on (exit 2)."""


def now():
    return time.monotonic()


def log(msg):
    print(msg, flush=True)


# ----- processes ---------------------------------------------------------------------


class Proc:
    """A child in its own session, its output in a file."""

    def __init__(self, runner, name, argv, logfile, cpu=None):
        self.name = name
        self.log = Path(logfile)
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu)] + list(argv)
        self.argv = [str(a) for a in argv]
        self.out = open(self.log, "ab")
        self.popen = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid = self.popen.pid
        runner.record_pid(self.pid)

    def alive(self):
        return self.popen.poll() is None

    def send_signal(self, sig):
        if self.alive():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def stop(self, sig=signal.SIGTERM, grace=10.0):
        """Signal, wait `grace`, then SIGKILL. Returns the exit status."""
        self.send_signal(sig)
        try:
            rc = self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.send_signal(signal.SIGKILL)
            rc = self.popen.wait()
        self.out.close()
        return rc

    def tail(self, n=20):
        try:
            lines = ANSI.sub(b"", self.log.read_bytes()).decode(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])


class Runner:
    def __init__(self, dirpath, bindir):
        self.dir = Path(dirpath)
        self.bin = Path(bindir)
        self.procs = []
        self.pidfile = self.dir / "pids"

    def record_pid(self, pid):
        with open(self.pidfile, "a") as f:
            f.write(f"{pid}\n")

    def spawn(self, name, argv, cpu=None, logname=None):
        p = Proc(self, name, argv, self.dir / (logname or f"{name}.log"), cpu)
        self.procs.append(p)
        return p

    def exe(self, name):
        return str(self.bin / name)

    def mwctl(self, sock, *args, timeout=10, check=True, as_json=True):
        argv = [self.exe("mwctl"), "--socket", str(sock)]
        if as_json:
            argv.append("--json")
        argv += [str(a) for a in args]
        r = subprocess.run(argv, capture_output=True, timeout=timeout + 5)
        if check and r.returncode != 0:
            raise Failure(f"{' '.join(argv[1:])}: exit {r.returncode}: "
                          f"{r.stderr.decode(errors='replace').strip()}")
        if not as_json:
            return r
        try:
            return json.loads(r.stdout) if r.returncode == 0 else None
        except json.JSONDecodeError as e:
            raise Failure(f"{' '.join(argv[1:])}: not JSON ({e})")

    def stop_all(self):
        for p in reversed(self.procs):
            if p.alive():
                p.stop(grace=5)


# ----- measurements ------------------------------------------------------------------


def proc_status(pid):
    """RSS and friends of a process (kB), its threads and descriptors."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "HugetlbPages", "VmHWM"):
                out[k] = int(v.split()[0])
            elif k == "Threads":
                out[k] = int(v)
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, ValueError, IndexError):
        return None
    return out


def cpu_times():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v[:8]), idle


def busy_cpus(interval=1.0):
    t0, i0 = cpu_times()
    time.sleep(interval)
    t1, i1 = cpu_times()
    ncpu = os.cpu_count() or 1
    total = t1 - t0
    return 0.0 if total <= 0 else ncpu * (1 - (i1 - i0) / total)


def wait_quiet(patience):
    """Waits until other processes use less than a quarter of a CPU (as
    benches/e2e does); returns the last figure."""
    deadline = now() + patience
    while True:
        b = busy_cpus()
        if b < 0.25 or now() >= deadline:
            if b >= 0.25:
                log(f"soak: warning: other processes keep {b:.2f} CPUs busy "
                    f"(waited {patience:.0f} s): figures will be noisy")
            return b
        time.sleep(1)


def udp_snmp():
    """The kernel's UDP counters (this network namespace)."""
    lines = [l.split() for l in Path("/proc/net/snmp").read_text().splitlines() if l.startswith("Udp:")]
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:])}


def pcap_packets(path):
    """Records in a pcap file (None when it is not one)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if len(data) < 24:
        return None
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        return None
    off, n = 24, 0
    while off + 16 <= len(data):
        incl = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        off += 16 + incl
        if off > len(data):
            break
        n += 1
    return n


class LogCounter:
    """Counts a log file's lines as it grows."""

    def __init__(self, path):
        self.path = Path(path)
        self.offset = 0
        self.lines = 0
        self.warn = 0
        self.error = 0
        self.notable = []

    def update(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read()
        except OSError:
            return self.lines
        end = chunk.rfind(b"\n") + 1
        whole = ANSI.sub(b"", chunk[:end])
        self.offset += end
        self.lines += whole.count(b"\n")
        for line in whole.splitlines():
            if b" WARN " in line or b" ERROR " in line:
                if b" WARN " in line:
                    self.warn += 1
                else:
                    self.error += 1
                if len(self.notable) < 50:
                    self.notable.append(line.decode(errors="replace"))
        return self.lines


def per_minute(samples):
    """Lines per minute from (t, value) samples: the increase over each
    whole minute since the first sample (and the last partial one scaled)."""
    if len(samples) < 2:
        return []
    t0 = samples[0][0]
    out, start_v, start_t = [], samples[0][1], t0
    for t, v in samples[1:]:
        if t - start_t >= 60 - 1e-6:
            out.append(v - start_v)
            start_v, start_t = v, t
    t, v = samples[-1]
    if t - start_t >= 10:
        out.append(round((v - start_v) * 60 / (t - start_t)))
    return out


def counters_by_port(rows):
    return {r["port"]: r for r in rows}


def delta(a, b):
    """Counter row b - a (drops by reason too)."""
    out = {}
    for k, v in b.items():
        if isinstance(v, int) and k != "port":
            out[k] = v - a.get(k, 0)
        elif k == "drops":
            out[k] = {r: n - a.get("drops", {}).get(r, 0) for r, n in v.items()}
    out["port"] = b["port"]
    return out


def balance(row):
    """received - (forwarded + dropped + punted), and the drops' sum check."""
    drops = sum(row["drops"].values())
    return row["received"] - (row["forwarded"] + row["dropped"] + row["punted"]), drops - row["dropped"]


def nonzero(d):
    return {k: v for k, v in d.items() if v}


class Checks:
    def __init__(self):
        self.items = []

    def add(self, name, ok, detail):
        self.items.append({"check": name, "ok": bool(ok), "detail": detail})
        log(f"  [{'ok' if ok else 'FAIL'}] {name}: {detail}")

    def ok(self):
        return all(c["ok"] for c in self.items)


def mib(kb):
    return None if kb is None else round(kb / 1024, 1)


# ----- churn ---------------------------------------------------------------------------


class Every:
    """A periodic action in the main loop."""

    def __init__(self, period, offset=0.0):
        self.period = period
        self.next = now() + offset
        self.max_lag = 0.0

    def due(self, t):
        if self.period > 0 and t >= self.next:
            self.max_lag = max(self.max_lag, t - self.next)
            self.next += self.period
            if self.next < t:
                self.next = t + self.period
            return True
        return False


class Captures:
    """Captures started and stopped in turn: each kind of the rotation is
    `(router, port, extra args, count, seconds)`; a capture with a count ends
    on its own (or is stopped after `seconds`), one without is stopped after
    `seconds` with SIGINT, as Ctrl-C would (mwctl flushes the pcap after each
    packet: what it wrote is a whole file)."""

    def __init__(self, runner, rotation, sock_of):
        self.r = runner
        self.rotation = rotation
        self.sock_of = sock_of
        self.i = 0
        self.running = None
        self.done = []
        self.n = 0

    def start(self):
        if self.running:
            return
        target, port, extra, count, secs = self.rotation[self.i % len(self.rotation)]
        self.i += 1
        self.n += 1
        pcap = self.r.dir / "captures" / f"cap-{self.n}.pcap"
        pcap.parent.mkdir(exist_ok=True)
        argv = [self.r.exe("mwctl"), "--socket", str(self.sock_of(target)), "capture", str(port),
                "-w", str(pcap)] + list(extra)
        if count:
            argv += ["-c", str(count)]
        p = self.r.spawn(f"capture-{self.n}", argv, logname="captures.log")
        self.running = dict(proc=p, pcap=pcap, target=target, port=port, kind=" ".join(extra) or "rx",
                            count=count, started=now(), secs=secs)

    def poll(self, final=False):
        c = self.running
        if not c:
            return
        p = c["proc"]
        if p.alive() and "stopped_at" not in c and (final or now() - c["started"] >= c["secs"]):
            p.send_signal(signal.SIGINT)
            c["stopped_at"] = now()
        if p.alive() and "stopped_at" in c:
            if final:
                try:
                    p.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            if p.alive() and now() - c["stopped_at"] > 3:
                p.send_signal(signal.SIGKILL)
                c["killed"] = True
                p.popen.wait()
        if p.alive():
            return
        rc = p.popen.wait()
        p.out.close()
        pk = pcap_packets(c["pcap"])
        stopped = "stopped_at" in c
        rec = dict(target=c["target"], port=c["port"], kind=c["kind"], count=c["count"],
                   seconds=round(now() - c["started"], 2), exit=rc, stopped=stopped,
                   killed=c.get("killed", False), packets=pk)
        # Ended by its count (exit 0) or stopped by SIGINT; either way a
        # readable pcap, and a capture with a count ends only by it when not
        # stopped.
        rec["ok"] = pk is not None and not rec["killed"] and (
            rc == 0 or (stopped and rc == -signal.SIGINT))
        self.done.append(rec)
        try:
            c["pcap"].unlink()
        except OSError:
            pass
        self.running = None

    def summary(self):
        d = self.done
        return dict(started=self.n, finished=len(d), ok=sum(1 for c in d if c["ok"]),
                    by_count=sum(1 for c in d if not c["stopped"]),
                    stopped=sum(1 for c in d if c["stopped"]),
                    packets=sum(c["packets"] or 0 for c in d),
                    failed=[c for c in d if not c["ok"]][:10])


class Sampler:
    """RSS, threads and descriptors of the watched daemons; their log lines."""

    def __init__(self, t0):
        self.t0 = t0
        self.rss = {}     # name -> [(t, status)]
        self.logs = {}    # name -> (LogCounter, [(t, lines)])

    def watch_log(self, name, path):
        self.logs[name] = (LogCounter(path), [])

    def sample(self, pids):
        t = round(now() - self.t0, 1)
        for name, pid in pids.items():
            st = proc_status(pid) if pid else None
            if st:
                self.rss.setdefault(name, []).append((t, st))
        for name, (lc, s) in self.logs.items():
            s.append((t, lc.update()))

    def rss_summary(self, name):
        s = self.rss.get(name, [])
        if not s:
            return None
        first, last = s[0][1], s[-1][1]
        return dict(start_kb=first.get("VmRSS"), end_kb=last.get("VmRSS"),
                    max_kb=max(x[1].get("VmRSS", 0) for x in s),
                    start_anon_kb=first.get("RssAnon"), end_anon_kb=last.get("RssAnon"),
                    hugetlb_kb=last.get("HugetlbPages"),
                    threads=(first.get("Threads"), last.get("Threads")),
                    fds=(first.get("fds"), last.get("fds")),
                    samples=[(t, x.get("VmRSS")) for t, x in s])

    def log_summary(self, name):
        lc, s = self.logs[name]
        lc.update()
        pm = per_minute(s)
        return dict(lines=lc.lines, warn=lc.warn, error=lc.error, per_minute=pm,
                    max_per_minute=max(pm) if pm else lc.lines, warn_and_error_lines=lc.notable)


# ----- default mode: mwrouterd, its buddy, mwgen ---------------------------------------


def memif(n, sock, role):
    return f"net_memif{n},role={role},id=0,socket={sock},socket-abstract=no"


def toml_list(v):
    return "[" + ", ".join(json.dumps(x) for x in v) + "]"


def timers_toml(refresh_ms=None):
    t = dict(TIMERS)
    if refresh_ms:
        t["refresh_ms"] = refresh_ms
    return "[timers]\n" + "".join(f"{k} = {v}\n" for k, v in t.items())


def router_toml(d, eal, opts, variant):
    """The router under test; `variant` 1 adds a static entry on HR 0x0103
    and changes timers.refresh_ms: what each reload toggles."""
    s = f"""# benches/soak: the router under test (variant {variant})
[router]
name = "soak"

[dpdk]
eal_args = {toml_list(eal + ["-l", str(opts.worker_core)])}

[workers]
count = 1
cores = [{opts.worker_core}]
control_cores = [{opts.control_core}]
idle = "busy-poll"

{timers_toml(3300 if variant else None)}
[admin]
socket = "{d / 'router.sock'}"

[log]
level = "info"
"""
    hrs = [(0x0101, 0x0201, memif(0, d / "a.sock", "server"), ROUTER_A_MAC, [(NODE_A, GEN_A_MAC)]),
           (0x0102, 0x0202, memif(1, d / "b.sock", "server"), ROUTER_B_MAC, [(NODE_B, GEN_B_MAC)]),
           (0x0103, 0x0203, memif(2, d / "c.sock", "server"), ROUTER_C_MAC,
            [(TOGGLED_NODE, "02:00:00:00:03:31")] if variant else [])]
    for addr, san, dev, mac, statics in hrs:
        s += f"""
[[hr]]
address = {addr:#06x}
san_id = {san:#06x}
mtu = 1500
[hr.port]
backend = "dpdk"
device = "{dev}"
mac = "{mac}"
"""
        for a, n in statics:
            s += f"[[hr.static]]\naddress = {a:#06x}\nnative = \"{n}\"\n"
    return s


def buddy_toml(d):
    s = f"""# benches/soak: the buddy (HR 0x0301 on the router's SAN 0x0203)
[router]
name = "buddy"

[dpdk]
eal_args = {toml_list(["--no-huge", "-m", "256", "--no-shconf", "--no-pci", "--no-telemetry",
                       "--log-level=warning", "-l", "0"])}

[workers]
count = 1
idle = "adaptive"

{timers_toml()}
[admin]
socket = "{d / 'buddy.sock'}"

[log]
level = "info"

[[hr]]
address = {BUDDY_HR:#06x}
san_id = 0x0203
mtu = 1500
[hr.port]
backend = "dpdk"
device = "{memif(0, d / 'c.sock', 'client')}"
mac = "{BUDDY_MAC}"
"""
    for i, (hr, san, node) in enumerate(BUDDY_FAR):
        s += f"""
[[hr]]
address = {hr:#06x}
san_id = {san:#06x}
mtu = 1500
[hr.port]
backend = "dpdk"
device = "net_null{i},no-rx=1"
mac = "02:00:00:00:{hr >> 8:02x}:01"
[[hr.static]]
address = {node:#06x}
native = "02:00:00:00:{hr >> 8:02x}:30"
"""
    return s


def write_atomic(path, text):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def wait_until(what, timeout, f, proc=None):
    deadline = now() + timeout
    while True:
        if proc is not None and not proc.alive():
            raise Failure(f"{proc.name} exited while waiting for {what}:\n{proc.tail()}")
        v = f()
        if v:
            return v
        if now() > deadline:
            raise Failure(f"timed out waiting for {what}")
        time.sleep(0.1)


def memory_mode(opts):
    """EAL memory flags: hugepages (--in-memory) when root and at least 256
    free 2 MB pages are reserved and mounted (this script reserves none),
    else --no-huge -m 512 --no-shconf."""
    info = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            k, _, v = line.partition(":")
            info[k] = v.split()[0]
    except OSError:
        pass
    free = int(info.get("HugePages_Free", 0))
    mounted = any(l.split()[2] == "hugetlbfs" for l in Path("/proc/mounts").read_text().splitlines()
                  if len(l.split()) > 2)
    general = ["--no-pci", "--no-telemetry", "--log-level=warning"]
    if not opts.no_huge and os.geteuid() == 0 and free >= 256 and mounted:
        return ["--in-memory"] + general, f"hugepages: {free} x 2 MB free (reserved before the run), EAL --in-memory"
    why = "--no-huge asked" if opts.no_huge else f"{free} free 2 MB hugepages, root {os.geteuid() == 0}, hugetlbfs {mounted}"
    return ["--no-huge", "-m", "512", "--no-shconf"] + general, f"no hugepages ({why}): EAL --no-huge -m 512"


def mwgen_argv(r, eal, opts, d, extra):
    return [r.exe("mwgen"), "--eal", " ".join(eal + ["-l", str(opts.gen_core)]),
            "--core", str(opts.gen_core),
            "--tx", "dpdk:" + memif(0, d / "a.sock", "client"),
            "--rx", "dpdk:" + memif(1, d / "b.sock", "client"),
            "--rx-mac", GEN_B_MAC, "--mac", GEN_A_MAC, "--to", ROUTER_A_MAC,
            "--src", f"{NODE_A:#06x}", "--dst", f"{NODE_B:#06x}", "--size", str(opts.size)] + extra


def buddy_rts(r, sock):
    """RTs the router keeps that came from the buddy."""
    rows = r.mwctl(sock, "show", "rts", check=False) or []
    return sum(1 for x in rows if str(x.get("origin", "")).startswith("buddy"))


def run_default(r, opts, checks, report):
    d = r.dir
    busy = wait_quiet(opts.patience)
    report["other_busy_cpus_before"] = round(busy, 2)
    eal, mem = memory_mode(opts)
    report["memory"] = mem
    log(f"soak: {mem}")
    os.sched_setaffinity(0, {opts.control_core})
    cfg = d / "router.toml"
    variant = 0
    write_atomic(cfg, router_toml(d, eal, opts, variant))
    (d / "buddy.toml").write_text(buddy_toml(d))
    sock, bsock = d / "router.sock", d / "buddy.sock"
    area = sock.with_suffix(".stats")
    # The daemon pins its worker and moves its other threads itself; it may
    # use the worker's core and the control core.
    router = r.spawn("mwrouterd", [r.exe("mwrouterd"), "--config", cfg],
                     cpu=",".join(sorted({str(opts.worker_core), str(opts.control_core)})))
    wait_until("mwrouterd's admin socket", 30, lambda: sock.exists() and area.exists(), router)
    report["router_command"] = router.argv
    state = dict(buddy=None, buddy_starts=0)

    def start_buddy():
        state["buddy_starts"] += 1
        state["buddy"] = r.spawn("buddy", [r.exe("mwrouterd"), "--config", d / "buddy.toml"],
                                 cpu=opts.control_core)

    start_buddy()
    wait_until("the buddy's RTs at the router", 30, lambda: buddy_rts(r, sock) > 0, router)
    report["buddy_rts_full"] = full_rts = buddy_rts(r, sock)
    log(f"soak: mwrouterd (pid {router.pid}) and its buddy up; {full_rts} RTs from the buddy")

    # NDR, unless given.
    if opts.rate_pps:
        ndr = None
        rate = opts.rate_pps
        log(f"soak: rate {rate:.0f} pps (--rate-pps, no search)")
    else:
        sj = d / "search.json"
        argv = mwgen_argv(r, eal, opts, d, [
            "--search", "--pdr-loss", "0.5", "--latency-at", "50", "--trials", "1",
            "--trial-duration", opts.search_trial, "--precision", "5", "--json", sj, "--quiet"])
        log(f"soak: NDR search ({opts.search_trial} trials, 5 % precision) ...")
        g = r.spawn("mwgen-search", argv, cpu=opts.gen_core)
        while g.alive():
            if not router.alive():
                raise Failure(f"mwrouterd exited during the search:\n{router.tail()}")
            time.sleep(0.5)
        if g.popen.wait() != 0:
            raise Failure(f"mwgen's search failed:\n{g.tail()}")
        s = json.loads(sj.read_text())["search"]
        ndr = s["ndr"]["pps"]
        report["search"] = dict(ndr_pps=ndr, pdr_pps=s["pdr"]["pps"], max_pps=s.get("max_pps"),
                                trials=[dict(offered_pps=t.get("offered_pps"), passed=t.get("pass"))
                                        for t in s.get("trials", [])],
                                command=g.argv)
        rate = opts.fraction * ndr
        log(f"soak: NDR {ndr / 1e6:.3f} Mpps, PDR {s['pdr']['pps'] / 1e6:.3f} Mpps; "
            f"soaking at {opts.fraction:.0%} of the NDR: {rate / 1e6:.3f} Mpps")
        if ndr <= 0:
            raise Failure("the NDR search found no rate without loss")
    report["rate_pps"] = rate
    report["ndr_pps"] = ndr
    time.sleep(1)

    # The soak.
    secs = opts.minutes * 60
    before = counters_by_port(r.mwctl(sock, "show", "counters"))
    t0 = now()
    sampler = Sampler(t0)
    sampler.watch_log("mwrouterd", router.log)
    pids = lambda: {"mwrouterd": router.pid,
                    "buddy": state["buddy"].pid if state["buddy"] and state["buddy"].alive() else None}
    sampler.sample(pids())
    rj = d / "run.json"
    gen = r.spawn("mwgen", mwgen_argv(r, eal, opts, d, [
        "--rate", f"{rate:.0f}pps", "--duration", f"{secs}s", "--json", rj, "--quiet"]), cpu=opts.gen_core)
    report["generator_command"] = gen.argv
    log(f"soak: {opts.minutes:g} min at {rate / 1e6:.3f} Mpps; buddy flap every {opts.flap_every:g} s, "
        f"reload every {opts.reload_every:g} s, capture every {opts.capture_every:g} s")

    flap_steps = ["port-down", "port-up", "port-down", "port-up", "kill", "restart"]
    flap = dict(i=0, actions=[], errors=[], down_checked=0, seen_down=0, up_checked=0, seen_up=0)
    reloads = dict(n=0, ok=0, changes=0, failed=[])
    caps = Captures(r, [
        ("router", 0, [], 1000, 5.0),
        ("router", 1, ["--transmitted"], 0, 2.0),
        ("router", 2, [], 0, 2.0),
        ("router", 0, ["--drops"], 100, 2.0),
        ("router", 2, ["--transmitted"], 50, 3.0),
    ], lambda t: sock)
    t_flap, t_reload = Every(opts.flap_every, opts.flap_every), Every(opts.reload_every, 1.0)
    t_cap, t_sample = Every(opts.capture_every, 2.0), Every(opts.sample_every, opts.sample_every)
    t_report = Every(60, 60)
    last_step = None

    def observe():
        # What the previous step should have left: the buddy's RTs gone
        # after a down, back after an up (checked just before the next).
        n = buddy_rts(r, sock)
        if last_step in ("port-down", "kill"):
            flap["down_checked"] += 1
            flap["seen_down"] += n == 0
        elif last_step in ("port-up", "restart"):
            flap["up_checked"] += 1
            flap["seen_up"] += n == full_rts
        return n

    while gen.alive():
        t = now()
        if not router.alive():
            raise Failure(f"mwrouterd exited during the soak:\n{router.tail()}")
        if t_flap.due(t):
            n = observe()
            step = flap_steps[flap["i"] % len(flap_steps)]
            flap["i"] += 1
            try:
                b = state["buddy"]
                if step == "port-down":
                    r.mwctl(bsock, "port", "0", "down")
                elif step == "port-up":
                    r.mwctl(bsock, "port", "0", "up")
                elif step == "kill":
                    b.stop(signal.SIGKILL, 5)
                else:
                    start_buddy()
            except (Failure, subprocess.TimeoutExpired) as e:
                flap["errors"].append(f"{round(t - t0, 1)} s {step}: {e}")
            flap["actions"].append((round(t - t0, 1), step, n))
            last_step = step
        if t_reload.due(t):
            variant ^= 1
            write_atomic(cfg, router_toml(d, eal, opts, variant))
            reloads["n"] += 1
            try:
                a = r.mwctl(sock, "reload")
                if a and a.get("reloaded"):
                    reloads["ok"] += 1
                    reloads["changes"] += len(a.get("changes", []))
                else:
                    reloads["failed"].append(a)
            except (Failure, subprocess.TimeoutExpired) as e:
                reloads["failed"].append(str(e))
        if t_cap.due(t):
            caps.start()
        caps.poll()
        if t_sample.due(t):
            sampler.sample(pids())
        if t_report.due(t):
            rs = sampler.rss.get("mwrouterd", [(0, {})])[-1][1].get("VmRSS", 0)
            log(f"  [{(t - t0) / 60:4.1f} min] flaps {flap['i']}, reloads {reloads['ok']}/{reloads['n']}, "
                f"captures {len(caps.done)}, RSS {rs / 1024:.1f} MiB, "
                f"log {sampler.logs['mwrouterd'][0].lines} lines")
        time.sleep(0.05)
    gen_rc = gen.popen.wait()
    t_end = now()
    caps.poll(final=True)
    # Leave the buddy up, let RRP settle, then read.
    b = state["buddy"]
    if not b or not b.alive():
        start_buddy()
    else:
        r.mwctl(bsock, "port", "0", "up", check=False)
    sampler.sample(pids())
    time.sleep(2)
    sampler.sample(pids())
    after = counters_by_port(r.mwctl(sock, "show", "counters"))
    time.sleep(0.5)
    again = counters_by_port(r.mwctl(sock, "show", "counters"))
    ports_end = r.mwctl(sock, "show", "ports")
    router_end = r.mwctl(sock, "show", "router")
    stats_end = r.mwctl(sock, "stats")
    if gen_rc != 0:
        raise Failure(f"mwgen's soak run failed (exit {gen_rc}):\n{gen.tail()}")
    run = json.loads(rj.read_text())["run"]
    router_rc = router.stop(signal.SIGTERM, 15)
    if state["buddy"].alive():
        state["buddy"].stop(signal.SIGTERM, 10)
    rss = sampler.rss_summary("mwrouterd")
    logs = sampler.log_summary("mwrouterd")

    # ---- accounting ----
    log("\nsoak: checks")
    port_rows = {}
    for p in sorted(again):
        row = again[p]
        bal, sum_err = balance(row)
        port_rows[p] = dict(total=row, soak=delta(before[p], after[p]))
        checks.add(f"port {p}: received = forwarded + dropped + punted",
                   bal == 0 and sum_err == 0,
                   f"{row['received']} = {row['forwarded']} + {row['dropped']} + {row['punted']}"
                   f" (difference {bal}; drops by reason {nonzero(row['drops']) or 'none'})")
    quiet = all(again[p]["received"] == after[p]["received"] for p in (0, 1))
    checks.add("generator ports quiet at the end", quiet,
               "no packet received on ports 0 and 1 in the last 0.5 s" if quiet else
               f"ports 0/1 still receiving: {[again[p]['received'] - after[p]['received'] for p in (0, 1)]}")
    s0, s1, s2 = (port_rows[p]["soak"] for p in (0, 1, 2))
    tx, rx = run["tx"], run["rx"]
    sent = tx["sent"]
    unique = run["unique"]
    lost = run["lost"]
    gap_a = sent - s0["received"]                        # lost between mwgen and the router
    fwd_b = s1["transmitted"] - s1["injected"]           # forwarded out of port 1
    gap_b = fwd_b - rx["received"]                       # lost between the router and mwgen
    router_lost = s0["dropped"] + s0["punted"] + (s0["forwarded"] - fwd_b)
    explained = router_lost + gap_a + max(gap_b, 0)
    checks.add("mwgen's probes all reach the router (memif A)", gap_a == 0,
               f"mwgen sent {sent}, port 0 received {s0['received']} during the run (difference {gap_a})")
    checks.add("what the router forwards reaches mwgen (memif B)", gap_b == 0,
               f"port 1 forwarded out {fwd_b} (transmitted - injected), mwgen received {rx['received']} "
               f"probes (difference {gap_b})")
    checks.add("mwgen's loss = the router's drops", lost == s0["dropped"] + s0["punted"] + gap_a + gap_b
               and rx["duplicated"] == 0,
               f"lost {lost} (sent {sent} - unique {unique}); port 0 dropped {s0['dropped']} "
               f"({nonzero(s0['drops']) or 'none'}), punted {s0['punted']}; duplicated {rx['duplicated']}")
    odd = {k: v for k, v in nonzero(s0["drops"]).items() if k not in DROP_REASONS_GEN_PATH_OK}
    checks.add("drops on the generator's path only for a full egress ring", not odd,
               f"port 0 drops by reason: {nonzero(s0['drops']) or 'none'}"
               + (f"; unexpected: {odd} (a route to 0x0230 missing or wrong during the churn)" if odd else ""))
    checks.add("nothing forwarded towards the buddy", s2["transmitted"] - s2["injected"] == 0
               and s0["forwarded"] == fwd_b,
               f"port 2 forwarded out {s2['transmitted'] - s2['injected']}; port 0 forwarded {s0['forwarded']}")
    steps = [a[1] for a in flap["actions"]]
    checks.add("the buddy flapped and its RTs came and went", not flap["errors"]
               and flap["seen_down"] > 0 and flap["seen_up"] > 0,
               f"{steps.count('port-down')} port down/up, {steps.count('kill')} kills and restarts; "
               f"the router held none of the buddy's RTs {opts.flap_every:g} s after {flap['seen_down']} of "
               f"{flap['down_checked']} downs and kills, all {full_rts} after {flap['seen_up']} of "
               f"{flap['up_checked']} ups and restarts"
               + (f"; errors: {flap['errors'][:3]}" if flap["errors"] else ""))
    checks.add("every reload applied", reloads["n"] > 0 and reloads["ok"] == reloads["n"],
               f"{reloads['ok']} of {reloads['n']} reloads applied, {reloads['changes']} changes"
               + (f"; failed: {reloads['failed'][:3]}" if reloads["failed"] else ""))
    cs = caps.summary()
    checks.add("every capture started, stopped and wrote a pcap", cs["finished"] > 0 and cs["ok"] == cs["finished"],
               f"{cs['finished']} captures ({cs['by_count']} ended by their count, {cs['stopped']} stopped), "
               f"{cs['packets']} packets" + (f"; failed: {cs['failed'][:3]}" if cs["failed"] else ""))
    growth = rss["end_kb"] - rss["start_kb"]
    rss_ok = growth <= max(opts.rss_slack_kb, rss["start_kb"] * 0.05)
    checks.add("RSS flat", rss_ok,
               f"mwrouterd VmRSS {mib(rss['start_kb'])} -> {mib(rss['end_kb'])} MiB (max {mib(rss['max_kb'])}), "
               f"anonymous {mib(rss['start_anon_kb'])} -> {mib(rss['end_anon_kb'])} MiB, "
               f"threads {rss['threads'][0]} -> {rss['threads'][1]}, fds {rss['fds'][0]} -> {rss['fds'][1]} "
               f"(bound: growth <= max({opts.rss_slack_kb // 1024} MiB, 5 %))")
    fds_ok = rss["fds"][1] <= rss["fds"][0] + 4 and rss["threads"][1] <= rss["threads"][0] + 2
    checks.add("threads and descriptors flat", fds_ok, f"threads {rss['threads']}, fds {rss['fds']}")
    checks.add("no log flood", logs["max_per_minute"] <= opts.max_log_per_min,
               f"{logs['lines']} lines in {(t_end - t0) / 60:.1f} min, at most {logs['max_per_minute']} "
               f"in a minute (bound {opts.max_log_per_min}), {logs['warn']} WARN, {logs['error']} ERROR")
    checks.add("mwrouterd stopped cleanly", router_rc == 0, f"exit status {router_rc} after SIGTERM")

    report.update(
        minutes=round((t_end - t0) / 60, 2),
        generator=dict(sent=sent, refused=tx.get("refused"), no_buffer=tx.get("no_buffer"),
                       received=rx["received"], unique=unique, lost=lost, duplicated=rx["duplicated"],
                       reordered=rx["reordered"], other=rx.get("other"), loss_ratio=run.get("loss_ratio"),
                       tx_pps=run.get("tx_pps"), rx_pps=run.get("rx_pps"), latency_ns=run.get("latency_ns"),
                       duration_s=run.get("duration_s")),
        explained=dict(port0_dropped=s0["dropped"], port0_drops=nonzero(s0["drops"]),
                       port0_punted=s0["punted"], memif_a_gap=gap_a, memif_b_gap=gap_b),
        ports=port_rows, ports_end=ports_end, router_end=router_end, stats_end=stats_end,
        flaps=dict(flap, buddy_starts=state["buddy_starts"]),
        schedule_max_lag_s=dict(flap=round(t_flap.max_lag, 2), reload=round(t_reload.max_lag, 2),
                                capture=round(t_cap.max_lag, 2), sample=round(t_sample.max_lag, 2)),
        reloads=reloads, captures=dict(cs, all=caps.done), rss=dict(mwrouterd=rss,
                                                                     buddy=sampler.rss_summary("buddy")),
        log=logs, router_exit=router_rc)
    log(f"\nsoak: {report['minutes']:.1f} min at {rate / 1e6:.3f} Mpps: mwgen sent {sent}, received {rx['received']}, "
        f"lost {lost} ({nonzero(s0['drops']) or 'no drops'}), refused by port {tx.get('refused')}; "
        f"RSS {mib(rss['start_kb'])} -> {mib(rss['end_kb'])} MiB; log {logs['lines']} lines "
        f"(max {logs['max_per_minute']}/min)")


# ----- lab mode ------------------------------------------------------------------------


class HostClient:
    """A lab host's control socket (JSON lines)."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(10)
        self.s.connect(str(path))
        self.f = self.s.makefile("rb")

    def ask(self, req):
        self.s.sendall((json.dumps(req) + "\n").encode())
        line = self.f.readline()
        if not line:
            raise Failure(f"host closed the connection on {req}")
        a = json.loads(line)
        if not a.get("ok"):
            raise Failure(f"host refused {req}: {a.get('error')}")
        return a

    def close(self):
        self.s.close()


def parse_impair(spec):
    out = dict(rx_loss=0.0, duplicate=0.0, reorder=0.0)
    for part in filter(None, spec.split(",")):
        k, _, v = part.partition("=")
        k = {"loss": "rx_loss", "dup": "duplicate", "duplicate": "duplicate", "reorder": "reorder",
             "rx_loss": "rx_loss"}.get(k.strip())
        if not k:
            raise SystemExit(f"--impair {spec}: expected loss=P,dup=P,reorder=P")
        out[k] = float(v)
    return out


def toggled_static(text, on, node):
    """A router's configuration with (or without) one more static entry on
    its last HR (a TOML [[hr.static]] at the end belongs to the last [[hr]])."""
    marker = "# benches/soak: toggled static entry\n"
    base = text.split(marker)[0]
    if not on:
        return base
    return base + marker + f"[[hr.static]]\naddress = {node:#06x}\nnative = \"127.0.0.1:9\"\n"


def run_lab(r, opts, checks, report):
    d = r.dir
    lab = d / "lab"
    topo = Path(opts.topology or Path(opts.root) / "examples" / "appendix-b.toml")
    busy = wait_quiet(opts.patience)
    report["other_busy_cpus_before"] = round(busy, 2)
    log(f"soak --lab: mwlab up {topo} --wait --dir {lab}")
    up = subprocess.run([r.exe("mwlab"), "up", str(topo), "--wait", "--dir", str(lab)],
                        capture_output=True, timeout=120, start_new_session=True)
    state_file = lab / "lab.json"
    if state_file.exists():
        for p in json.loads(state_file.read_text())["procs"]:
            r.record_pid(p["pid"])
    if up.returncode != 0:
        raise Failure(f"mwlab up failed ({up.returncode}): {up.stderr.decode(errors='replace')}")
    st = json.loads(state_file.read_text())
    plan = st["plan"]
    routers = {x["name"]: x for x in plan["routers"]}
    hosts = {h["spec"]["name"]: h for h in plan["hosts"]}
    pid_of = {(p["role"], p["name"]): p["pid"] for p in st["procs"]}
    log_of = {p["name"]: p["log"] for p in st["procs"] if p["role"] == "router"}
    report["lab"] = dict(topology=str(topo), routers=list(routers), hosts=list(hosts))
    if opts.flap_router not in routers:
        raise Failure(f"--flap-router {opts.flap_router}: no such router ({', '.join(routers)})")
    flap_r = routers[opts.flap_router]
    rsock = lambda name: routers[name]["socket"]

    streams = []
    for pair in opts.streams.split(","):
        a, _, b = pair.partition(">")
        if a not in hosts or b not in hosts:
            raise Failure(f"--streams: {pair}: unknown host")
        streams.append((a, b))
    clients = {h: HostClient(hosts[h]["spec"]["control"]) for h in hosts}
    imp = parse_impair(opts.impair)
    for i, h in enumerate(sorted(hosts)):
        clients[h].ask(dict(cmd="impair", seed=opts.seed + i, **imp))
    report["impair"] = imp

    secs = opts.minutes * 60
    count = int(opts.lab_rate * secs)
    before_r = {n: counters_by_port(r.mwctl(rsock(n), "show", "counters")) for n in routers}
    snmp0 = udp_snmp()
    t0 = now()
    sampler = Sampler(t0)
    for n in routers:
        sampler.watch_log(n, log_of[n])
    pids = {n: pid_of[("router", n)] for n in routers}
    sampler.sample(pids)
    for a, b in streams:
        clients[a].ask(dict(cmd="send", dst=hosts[b]["address"], count=count, rate_pps=opts.lab_rate,
                            size=64, wait=False))
    log(f"soak --lab: {len(streams)} streams of {opts.lab_rate:g} probes/s for {opts.minutes:g} min "
        f"({count} each); impairment on every host {imp}; {opts.flap_router}'s ports flap every "
        f"{opts.flap_every:g} s, reload every {opts.reload_every:g} s, capture every {opts.capture_every:g} s")

    nports = len(flap_r["hrs"])
    flap_steps = []
    for p in range(nports):
        flap_steps += [(p, "down"), (p, "up")]
    flap = dict(i=0, actions=[], errors=[])
    reloads = dict(n=0, ok=0, changes=0, failed=[])
    toggles = {n: False for n in routers}
    originals = {n: Path(routers[n]["config"]).read_text() for n in routers}
    order = sorted(routers)
    rot = []
    for i, n in enumerate(order):
        rot.append((n, 0, [], 200, 3.0))
        rot.append((n, 1 % len(routers[n]["hrs"]), ["--transmitted"], 0, 2.0))
        rot.append((n, 0, ["--drops"], 0, 2.0))
    caps = Captures(r, rot, rsock)
    t_flap, t_reload = Every(opts.flap_every, opts.flap_every), Every(opts.reload_every, 1.0)
    t_cap, t_sample = Every(opts.capture_every, 2.0), Every(opts.sample_every, opts.sample_every)
    t_report = Every(60, 60)
    ri = 0
    down_ports = set()
    while now() - t0 < secs:
        t = now()
        for n in routers:
            if not os.path.exists(f"/proc/{pids[n]}"):
                raise Failure(f"router {n} exited during the soak")
        if t_flap.due(t):
            port, what = flap_steps[flap["i"] % len(flap_steps)]
            flap["i"] += 1
            try:
                r.mwctl(rsock(opts.flap_router), "port", str(port), what)
                (down_ports.add if what == "down" else down_ports.discard)(port)
            except (Failure, subprocess.TimeoutExpired) as e:
                flap["errors"].append(f"{round(t - t0, 1)} s port {port} {what}: {e}")
            flap["actions"].append((round(t - t0, 1), port, what))
        if t_reload.due(t):
            n = order[ri % len(order)]
            ri += 1
            toggles[n] = not toggles[n]
            write_atomic(routers[n]["config"], toggled_static(originals[n], toggles[n], 0x01f0 + ri % 8))
            reloads["n"] += 1
            try:
                a = r.mwctl(rsock(n), "reload")
                if a and a.get("reloaded"):
                    reloads["ok"] += 1
                    reloads["changes"] += len(a.get("changes", []))
                else:
                    reloads["failed"].append((n, a))
            except (Failure, subprocess.TimeoutExpired) as e:
                reloads["failed"].append((n, str(e)))
        if t_cap.due(t):
            caps.start()
        caps.poll()
        if t_sample.due(t):
            sampler.sample(pids)
        if t_report.due(t):
            lines = sum(lc.lines for lc, _ in sampler.logs.values())
            log(f"  [{(t - t0) / 60:4.1f} min] flaps {flap['i']}, reloads {reloads['ok']}/{reloads['n']}, "
                f"captures {len(caps.done)}, router logs {lines} lines")
        time.sleep(0.05)
    caps.poll(final=True)
    for p in sorted(down_ports):
        r.mwctl(rsock(opts.flap_router), "port", str(p), "up", check=False)
    # The sends end on their count: wait for them, then the drain.
    deadline = now() + 120
    while now() < deadline and any(clients[a].ask(dict(cmd="stats"))["busy"] for a, _ in streams):
        time.sleep(0.5)
    t_end = now()
    time.sleep(2)
    for h in hosts:
        clients[h].ask(dict(cmd="impair"))  # off: a held datagram is delivered
    time.sleep(0.5)
    sampler.sample(pids)
    hstats = {h: clients[h].ask(dict(cmd="stats")) for h in hosts}
    after_r = {n: counters_by_port(r.mwctl(rsock(n), "show", "counters")) for n in routers}
    snmp1 = udp_snmp()
    for n in routers:
        write_atomic(routers[n]["config"], originals[n])
    for c in clients.values():
        c.close()

    log("\nsoak --lab: checks")
    per_router = {}
    bad = []
    total_drops = {}
    for n in sorted(routers):
        per_router[n] = {}
        for p, row in sorted(after_r[n].items()):
            bal, sum_err = balance(row)
            dl = delta(before_r[n][p], row)
            per_router[n][p] = dict(total=row, soak=dl)
            for k, v in dl["drops"].items():
                total_drops[k] = total_drops.get(k, 0) + v
            if bal or sum_err:
                bad.append(f"{n} port {p}: {row['received']} != {row['forwarded']} + {row['dropped']} + "
                           f"{row['punted']}")
    nports_all = sum(len(v) for v in per_router.values())
    checks.add("every router port: received = forwarded + dropped + punted", not bad,
               f"{nports_all} ports of {len(routers)} routers" + (f"; failed: {bad}" if bad else ""))
    per_stream = []
    sent_t = uniq_t = dup_t = reo_t = 0
    for a, b in streams:
        src, dst = hosts[a]["address"], hosts[b]["address"]
        sent = hstats[a]["sent"].get(f"{dst:#06x}", 0)
        got = hstats[b]["received"].get(f"{src:#06x}", {})
        row = dict(stream=f"{a}>{b}", sent=sent, received=got.get("received", 0), unique=got.get("unique", 0),
                   duplicated=got.get("duplicated", 0), reordered=got.get("reordered", 0),
                   lost=sent - got.get("unique", 0))
        per_stream.append(row)
        sent_t += sent
        uniq_t += row["unique"]
        dup_t += row["duplicated"]
        reo_t += row["reordered"]
    lost_t = sent_t - uniq_t
    imp_p = {k: sum(hstats[h]["impair"]["probes"][k] for h in hosts) for k in ("seen", "lost", "duplicated", "reordered")}
    imp_all = {k: sum(hstats[h]["impair"][k] for h in hosts) for k in ("seen", "lost", "duplicated", "reordered")}
    router_drops = sum(total_drops.values())
    udp_drops = {k: snmp1.get(k, 0) - snmp0.get(k, 0) for k in ("InErrors", "RcvbufErrors", "NoPorts", "SndbufErrors")}
    kernel = udp_drops["RcvbufErrors"] + udp_drops["NoPorts"] + udp_drops["SndbufErrors"]
    unexplained = lost_t - imp_p["lost"] - router_drops - kernel
    checks.add("every probe sent (sends finished)", all(hstats[a]["sent"].get(f"{hosts[b]['address']:#06x}", 0) == count
                                                         for a, b in streams),
               f"{len(streams)} x {count} probes")
    checks.add("probe loss explained by counters", unexplained <= 0,
               f"lost {lost_t} of {sent_t} = impairment {imp_p['lost']} + router drops {router_drops} "
               f"({nonzero(total_drops) or 'none'}) + kernel UDP {kernel} ({nonzero(udp_drops) or 'none'})"
               f" {'-' if unexplained < 0 else '+'} {abs(unexplained)} "
               + ("(router drops of other packets than these probes)" if unexplained < 0 else
                  "(unexplained)" if unexplained else ""))
    checks.add("duplicates = the impairment's", dup_t == imp_p["duplicated"],
               f"received {dup_t} duplicated probes, the impairment duplicated {imp_p['duplicated']}")
    # Not an identity: a change of path reorders too, and a hold can put a
    # pair that a change of path reordered back in order.
    log(f"  [info] reordering: the receivers counted {reo_t} reordered probes, the impairment held "
        f"{imp_p['reordered']} back behind a probe of their stream (the difference: changes of path)")
    checks.add("the transit router flapped", flap["i"] > 0 and not flap["errors"],
               f"{flap['i']} port changes on {opts.flap_router}" + (f"; errors {flap['errors'][:3]}" if flap["errors"] else ""))
    checks.add("every reload applied", reloads["n"] > 0 and reloads["ok"] == reloads["n"],
               f"{reloads['ok']} of {reloads['n']} reloads applied, {reloads['changes']} changes"
               + (f"; failed: {reloads['failed'][:3]}" if reloads["failed"] else ""))
    cs = caps.summary()
    checks.add("every capture started, stopped and wrote a pcap", cs["finished"] > 0 and cs["ok"] == cs["finished"],
               f"{cs['finished']} captures ({cs['by_count']} by count, {cs['stopped']} stopped), {cs['packets']} packets"
               + (f"; failed: {cs['failed'][:3]}" if cs["failed"] else ""))
    rss = {n: sampler.rss_summary(n) for n in routers}
    grown = {n: (mib(x["start_kb"]), mib(x["end_kb"])) for n, x in rss.items()
             if x["end_kb"] - x["start_kb"] > max(opts.rss_slack_kb, x["start_kb"] * 0.05)}
    checks.add("RSS flat on every router", not grown,
               ", ".join(f"{n} {mib(x['start_kb'])}->{mib(x['end_kb'])}" for n, x in sorted(rss.items()))
               + " MiB" + (f"; grown: {grown}" if grown else ""))
    logs = {n: sampler.log_summary(n) for n in routers}
    flood = {n: x["max_per_minute"] for n, x in logs.items() if x["max_per_minute"] > opts.max_log_per_min}
    checks.add("no log flood", not flood,
               ", ".join(f"{n} {x['lines']} (max {x['max_per_minute']}/min)" for n, x in sorted(logs.items()))
               + f"; bound {opts.max_log_per_min}/min per router" + (f"; flooded: {flood}" if flood else ""))

    keep_logs = d / "lab-logs"
    keep_logs.mkdir(exist_ok=True)
    for p in st["procs"]:
        try:
            (keep_logs / Path(p["log"]).name).write_bytes(Path(p["log"]).read_bytes())
        except OSError:
            pass
    down = subprocess.run([r.exe("mwlab"), "down", "--dir", str(lab)], capture_output=True, timeout=60)
    report.update(minutes=round((t_end - t0) / 60, 2), streams=per_stream,
                  probes=dict(sent=sent_t, unique=uniq_t, lost=lost_t, duplicated=dup_t, reordered=reo_t),
                  impairment_probes=imp_p, impairment_all=imp_all, router_drops=nonzero(total_drops),
                  kernel_udp=udp_drops, unexplained=unexplained, routers=per_router,
                  flaps=flap, reloads=reloads, captures=dict(cs, all=caps.done), rss=rss, log=logs,
                  schedule_max_lag_s=dict(flap=round(t_flap.max_lag, 2), reload=round(t_reload.max_lag, 2),
                                          capture=round(t_cap.max_lag, 2), sample=round(t_sample.max_lag, 2)),
                  hosts={h: {k: hstats[h].get(k) for k in ("impair", "rx_lost", "datagrams", "probes", "sent",
                                                            "errors_received", "send_errors")} for h in hosts},
                  mwlab_down=down.returncode)
    log(f"\nsoak --lab: {report['minutes']:.1f} min: {sent_t} probes sent, {uniq_t} received once, lost {lost_t} "
        f"(impairment {imp_p['lost']}, router drops {router_drops}, kernel {kernel}), duplicated {dup_t}, "
        f"reordered {reo_t}")


# ----- main ----------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(prog="benches/soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help=argparse.SUPPRESS)
    ap.add_argument("--bin-dir", required=True, help=argparse.SUPPRESS)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--json", help="write the report to FILE")
    ap.add_argument("--lab", action="store_true")
    ap.add_argument("--rate-pps", type=float)
    ap.add_argument("--fraction", type=float, default=0.9)
    ap.add_argument("--search-trial", default="2s")
    ap.add_argument("--size", default="64")
    ap.add_argument("--no-huge", action="store_true")
    ap.add_argument("--worker-core", type=int, default=0)
    ap.add_argument("--control-core", type=int, default=0)
    ap.add_argument("--gen-core", type=int, default=1)
    ap.add_argument("--flap-every", type=float, default=3.0)
    ap.add_argument("--reload-every", type=float, default=5.0)
    ap.add_argument("--capture-every", type=float, default=4.0)
    ap.add_argument("--sample-every", type=float, default=10.0)
    ap.add_argument("--max-log-per-min", type=int, default=300)
    ap.add_argument("--rss-slack-kb", type=int, default=4096)
    ap.add_argument("--patience", type=float, default=60.0)
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent), help=argparse.SUPPRESS)
    ap.add_argument("--topology")
    ap.add_argument("--flap-router", default="ad")
    ap.add_argument("--streams", default="H0>H9,H9>H0,H1>H6,H6>H1,H2>H8,H8>H2,H4>H3,H3>H4")
    ap.add_argument("--lab-rate", type=float, default=250.0)
    ap.add_argument("--impair", default="loss=0.01,dup=0.01,reorder=0.01")
    ap.add_argument("--seed", type=int, default=1)
    opts = ap.parse_args()

    r = Runner(opts.dir, opts.bin_dir)
    checks = Checks()
    report = dict(mode="lab" if opts.lab else "default", started=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  argv=sys.argv[1:], machine=dict(cpus=os.cpu_count(), kernel=os.uname().release))
    stopping = {"sig": None}

    def on_signal(sig, _frame):
        stopping["sig"] = sig
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    # benches/soak starts this script in the background, where SIGINT is
    # ignored, and children would inherit that: the captures are stopped
    # with SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rc = 0
    try:
        (run_lab if opts.lab else run_default)(r, opts, checks, report)
        rc = 0 if checks.ok() else 1
    except Failure as e:
        log(f"soak: {e}")
        report["error"] = str(e)
        rc = 2
    except KeyboardInterrupt:
        log("soak: interrupted")
        report["error"] = "interrupted"
        rc = 2
    finally:
        r.stop_all()
        if opts.lab and (Path(opts.dir) / "lab" / "lab.json").exists():
            subprocess.run([r.exe("mwlab"), "down", "--dir", str(Path(opts.dir) / "lab")],
                           capture_output=True, timeout=60)
    report["checks"] = checks.items
    report["ok"] = rc == 0
    if opts.json:
        Path(opts.json).write_text(json.dumps(report, indent=1, default=str) + "\n")
        log(f"soak: report written to {opts.json}")
    if checks.items:
        failed = [c["check"] for c in checks.items if not c["ok"]]
        log("soak: every check passed" if not failed else f"soak: {len(failed)} check(s) failed: {', '.join(failed)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
