#!/usr/bin/env python3
"""bench/bench.py BUILDDIR - ctxmon's benchmarks (run by bench/run.sh).

Measures, side by side in one run and with every process pinned:
  overhead  workload time traced / untraced, for each ctxmon command and
            backend and for perf sched record, perf record, trace-cmd record
            and two bpftrace scripts, on three workloads;
  loss      lost events at one CPU's pipe switch rate (from the overhead
            sessions) and with both CPUs saturated; bytes per event of the
            recordings;
  analysis  offline analysis throughput (events/s) on recordings of the
            same workload;
  rss       peak RSS of long-running ctxmon captures, short vs long.
Medians of BENCH_RUNS runs.  Prints the tables and the targets (met or
missed) and writes BUILDDIR/bench/results.json and results.md.

A tracer, backend or command that is not there (yet) is skipped with the
reason printed; it is picked up by the next run once it exists.
"""

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
CTXMON = os.path.join(B, "ctxmon")
HELPERS = os.path.join(B, "bench")
QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")
RUNS = int(os.environ.get("BENCH_RUNS", "3" if QUICK else "5"))
BPFCOST_ROUNDS = int(os.environ.get("BENCH_BPFCOST_ROUNDS",
                                    "1" if QUICK else "3"))
ONLY = set(filter(None, os.environ.get(
    "BENCH_ONLY", "overhead,loss,bpfcost,analysis,rss").split(",")))
TRACER_RE = re.compile(os.environ.get("BENCH_TRACERS", ""))
OUT = os.environ.get("BENCH_OUT", os.path.join(B, "bench"))
KEEP = os.environ.get("BENCH_KEEP", "") not in ("", "0")
QUIET_WAIT = float(os.environ.get("BENCH_QUIET_WAIT", "0"))
QUIET_LOAD = float(os.environ.get("BENCH_QUIET_LOAD", "0.3"))

# CPU placement: the switch-heavy pipe workload owns CPU 0, every tracer
# runs on CPU 1, so on "pipe" a tracer's cost is what it adds on the traced
# CPU (tracepoint, buffer write, wakeups).  The two-CPU workloads share
# CPU 1 with the tracer, so there its consumer's CPU time counts too.
TRACER_CPU = "1"

# Sizes: full runs take ~1 s per workload run, quick ones ~0.2 s.
if QUICK:
    PIPE_LOOPS, HB_ARGS, MIXED_SCALE = 60000, ["-g", "4", "-l", "50"], "0.25"
    SETTLE, SAT_SECONDS, RSS_SHORT, RSS_LONG = 0.5, 2.0, 3, 9
    ANALYSIS_LOOPS = 50000
else:
    PIPE_LOOPS, HB_ARGS, MIXED_SCALE = 300000, ["-g", "10", "-l", "120"], "1"
    SETTLE, SAT_SECONDS, RSS_SHORT, RSS_LONG = 1.0, 4.0, 15, 60
    # >= 10 M events in ctxmon's recording (issue 14 measures the
    # parallel decode on such a file; about 3.1 events a round trip since
    # the bpf backend drops the wakeups it need not keep), some 17 M and
    # 1.8 GB in perf's.
    ANALYSIS_LOOPS = 3500000

RESULTS = {"skipped": [], "targets": []}
TMP = None
# Process groups this run started and has not reaped yet: killed (by
# group id) if the run is interrupted.
LIVE = {}


def spawn(argv, **kw):
    p = subprocess.Popen(argv, start_new_session=True, **kw)
    LIVE[p.pid] = p
    return p


def reaped(p):
    LIVE.pop(p.pid, None)


def kill_live():
    for pid, p in list(LIVE.items()):
        if p.poll() is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        p.wait()
        reaped(p)


def log(msg=""):
    print(msg, flush=True)


def skip(what, reason):
    reason = " ".join(reason.split())[:300]
    log("  SKIP %s: %s" % (what, reason))
    RESULTS["skipped"].append({"what": what, "reason": reason})


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def run(argv, timeout=300, **kw):
    """subprocess.run with text output captured; never raises on rc."""
    try:
        return subprocess.run(argv, capture_output=True, text=True,
                              errors="replace", timeout=timeout, **kw)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(argv, -1, "", str(e))


def tail(path_or_text, n=3):
    text = path_or_text
    if os.path.exists(str(path_or_text)):
        with open(path_or_text, errors="replace") as f:
            text = f.read()
    lines = [l for l in text.splitlines() if l.strip() and
             "RLIMIT_MEMLOCK" not in l]
    return " | ".join(lines[-n:]) or "(no output)"


def read_ctxt():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    return 0


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0:3]


_libc = None


def tgkill(pid, sig):
    """Signal the main thread of pid; False when it is gone."""
    global _libc
    import ctypes
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.tgkill(pid, pid, int(sig)) == 0   # glibc >= 2.30


CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_cpu_ticks(pgid):
    """utime + stime of every process in process group pgid."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(st[2]) == pgid:
            total += int(st[11]) + int(st[12])
    return total


def fsize(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return None


# ---------------------------------------------------------------- workloads

class Workload:
    """A fixed amount of work, pinned; run() returns its time in seconds
    (as the workload reports it) and the machine's switches meanwhile."""

    def __init__(self, key, label, cpus, argv, pattern):
        self.key, self.label, self.cpus = key, label, cpus
        self.argv, self.pattern = argv, re.compile(pattern)

    def run(self):
        c0, t0 = read_ctxt(), time.monotonic()
        p = run(["taskset", "-c", self.cpus] + self.argv, timeout=600)
        wall = time.monotonic() - t0
        sw = read_ctxt() - c0
        m = self.pattern.search(p.stdout)
        if p.returncode != 0 or not m:
            raise RuntimeError("%s failed (rc %s): %s" % (
                self.label, p.returncode, tail(p.stdout + p.stderr)))
        return {"s": float(m.group(1)), "wall": wall, "switches": sw}


def workloads():
    perf = shutil.which("perf")
    wl = []
    if perf:
        wl.append(Workload(
            "pipe", "perf bench sched pipe -l %d, CPU 0" % PIPE_LOOPS, "0",
            [perf, "bench", "sched", "pipe", "-l", str(PIPE_LOOPS)],
            r"Total time:\s*([\d.]+)"))
        wl.append(Workload(
            "hackbench", "perf bench sched messaging %s, CPUs 0-1"
            % " ".join(HB_ARGS), "0,1",
            [perf, "bench", "sched", "messaging"] + HB_ARGS,
            r"Total time:\s*([\d.]+)"))
    else:
        skip("pipe and hackbench workloads", "perf is not installed")
    mixed = os.path.join(HELPERS, "mixed")
    if os.access(mixed, os.X_OK):
        wl.append(Workload("mixed", "bench/mixed %s, CPUs 0-1" % MIXED_SCALE,
                           "0,1", [mixed, MIXED_SCALE],
                           r"mixed:\s*([\d.]+) s"))
    else:
        skip("mixed workload", "%s not built" % mixed)
    return wl


class Saturation:
    """One pipe pair pinned to each CPU for a fixed time: the highest
    switch rate this machine makes."""
    key, label = "saturation", "2 x perf bench sched pipe, CPU 0 and CPU 1"

    def run(self, seconds=None):
        seconds = seconds or SAT_SECONDS
        perf = shutil.which("perf")
        c0, t0 = read_ctxt(), time.monotonic()
        ps = [spawn(["taskset", "-c", cpu, perf, "bench", "sched", "pipe",
                     "-l", "1000000000"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL) for cpu in ("0", "1")]
        time.sleep(seconds)
        # perf bench forks the other end of the pipe: kill both.
        for p in ps:
            os.killpg(p.pid, signal.SIGKILL)
        for p in ps:
            p.wait()
            reaped(p)
        wall = time.monotonic() - t0
        sw = read_ctxt() - c0
        return {"s": wall, "wall": wall, "switches": sw}


# ---------------------------------------------------------------- tracers

def ctxmon_help(cmd):
    """The --help text of a ctxmon subcommand, or None when it does not
    exist in this build."""
    p = run([CTXMON, cmd, "--help"], timeout=20)
    return p.stdout + p.stderr if p.returncode == 0 else None


class Tracer:
    """A capture tool run around a workload.  argv(d) is its command line
    (files go in d); collect(d) reads what it says about events and
    losses after it stopped."""
    group = "peer"
    ready_marker = None   # a line on stdout saying it is attached
    stop_timeout = 240    # seconds to write its file after SIGINT
    pipe_only = False     # overhead: the pipe workload only
    resend_s = 1e9        # repeat SIGINT this often until it ends

    def __init__(self, key, label):
        self.key, self.label = key, label
        self.broken = None

    def argv(self, d):
        raise NotImplementedError

    def collect(self, d):
        return {}


class CtxmonStat(Tracer):
    group = "ctxmon"

    def __init__(self, backend, default):
        key = "ctxmon-stat-" + backend
        label = "ctxmon stat --backend %s%s" % (
            backend, " (default)" if default else "")
        super().__init__(key, label)
        self.backend = backend

    def argv(self, d):
        return [CTXMON, "stat", "-a", "--backend", self.backend, "--json",
                "-o", os.path.join(d, "stat.json")]

    def collect(self, d):
        with open(os.path.join(d, "stat.json")) as f:
            j = json.loads(f.read().strip().splitlines()[-1])
        c = j.get("capture", {})
        return {"events": c.get("events"), "lost": c.get("lost"),
                "lost_per_cpu": c.get("lost_per_cpu"),
                "order_violations": c.get("order_violations"),
                "backend": j.get("backend")}


class Floor(Tracer):
    """bench/floor: the least a BPF tracer costs (issue 14): "count" adds
    one to a per-CPU counter on sched_switch; "ring" writes a 24-byte
    record per sched_switch and sched_waking to a BPF ring buffer that a
    reader drains every 5 ms."""
    group = "floor"

    def __init__(self, mode):
        super().__init__("floor-" + mode, {
            "count": "floor: tp_btf counter of sched_switch (per-CPU array)",
            "ring": "floor: BPF ring buffer, sched_switch + sched_waking, "
                    "drained every 5 ms"}[mode])
        self.mode = mode

    def argv(self, d):
        return [os.path.join(HELPERS, "floor"), self.mode]

    def collect(self, d):
        text = open(os.path.join(d, "stdout"), errors="replace").read() \
            if os.path.exists(os.path.join(d, "stdout")) else ""
        m = re.search(r"floor \w+: (\d+)", text)
        return {"events": int(m.group(1)), "lost": 0} if m else {}


# The floor each ctxmon tracer is compared with: aggregation with the
# counter, streaming with the ring.
FLOOR_OF = {"ctxmon-stat-bpf-agg": "floor-count",
            "ctxmon-stat-bpf": "floor-ring",
            "ctxmon-record-bpf": "floor-ring"}


def recinfo(path):
    exe = os.path.join(HELPERS, "recinfo")
    if not os.access(exe, os.X_OK):
        return None
    p = run([exe, path], timeout=600)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return None


class CtxmonRecord(Tracer):
    group = "ctxmon"

    def __init__(self, backend, default, help_text):
        key = "ctxmon-record" + ("-" + backend if backend else "")
        label = "ctxmon record" + (" --backend %s" % backend
                                   if backend else "") + \
            (" (default)" if default and backend else "")
        super().__init__(key, label)
        self.backend = backend
        self.help = help_text

    def argv(self, d):
        a = [CTXMON, "record", "-a", "-o", os.path.join(d, "rec.ctxmon")]
        if self.backend:
            a += ["--backend", self.backend]
        return a

    def collect(self, d):
        f = os.path.join(d, "rec.ctxmon")
        r = {"file": f, "bytes": fsize(f)}
        info = recinfo(f)
        if info:
            r.update(events=info["events"], lost=info["lost"],
                     lost_per_cpu=info["lost_per_cpu"],
                     switches=info["switches"], read_s=info["read_s"],
                     complete=info["complete"])
        else:
            # Without the helper: the summary record prints, if any.
            m = re.search(r"([\d,]+) events", tail(os.path.join(d, "stderr"),
                                                  5))
            if m:
                r["events"] = int(m.group(1).replace(",", ""))
        return r


class CtxmonOther(Tracer):
    """ctxmon latency (and other live commands): overhead only."""
    group = "ctxmon"

    def __init__(self, cmd, help_text):
        super().__init__("ctxmon-" + cmd, "ctxmon %s -a" % cmd)
        self.cmd, self.help = cmd, help_text

    def argv(self, d):
        a = [CTXMON, self.cmd]
        if re.search(r"(^|\s)-a\b|--all-cpus", self.help):
            a.append("-a")
        if re.search(r"(^|\s)-o\b|--output", self.help):
            a += ["-o", os.path.join(d, "out.txt")]
        return a


def perf_collect(d, f):
    """Samples and losses of a perf.data: losses per CPU from the
    PERF_RECORD_LOST records (perf script --show-lost-events)."""
    r = {"file": f, "bytes": fsize(f)}
    p = run(["perf", "report", "-i", f, "--stats"], timeout=600)
    m = re.search(r"^\s*SAMPLE events:\s*(\d+)", p.stdout, re.M)
    if m:
        r["events"] = int(m.group(1))
    sw = re.search(r"sched:sched_switch stats:\s*\n\s*SAMPLE events:\s*(\d+)",
                   p.stdout)
    if sw:
        r["switches"] = int(sw.group(1))
    per_cpu = {}
    s = subprocess.Popen(["perf", "script", "-i", f, "--show-lost-events",
                          "-F", "cpu,event"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True,
                         errors="replace")
    lost_re = re.compile(r"\[(\d+)\].*PERF_RECORD_LOST lost (\d+)")
    for line in s.stdout:
        if "PERF_RECORD_LOST" in line:
            m = lost_re.search(line)
            if m:
                cpu = int(m.group(1))
                per_cpu[cpu] = per_cpu.get(cpu, 0) + int(m.group(2))
    s.wait()
    ncpu = os.cpu_count() or 1
    r["lost"] = sum(per_cpu.values())
    r["lost_per_cpu"] = [per_cpu.get(c, 0) for c in
                         range(max([ncpu] + [c + 1 for c in per_cpu]))]
    return r


class PerfSchedRecord(Tracer):
    def __init__(self):
        super().__init__("perf-sched-record", "perf sched record")

    def argv(self, d):
        return ["perf", "sched", "record", "-o", os.path.join(d, "perf.data")]

    def collect(self, d):
        return perf_collect(d, os.path.join(d, "perf.data"))


class PerfRecord(Tracer):
    def __init__(self):
        super().__init__("perf-record",
                         "perf record -e sched_switch -e sched_wakeup -a")

    def argv(self, d):
        return ["perf", "record", "-e", "sched:sched_switch", "-e",
                "sched:sched_wakeup", "-a", "-o", os.path.join(d, "perf.data")]

    def collect(self, d):
        return perf_collect(d, os.path.join(d, "perf.data"))


class CtxmonProfile(Tracer):
    """ctxmon profile -F 99 -a (issue 16): overhead of the sampling
    profiler, next to perf record -F 99 -g."""
    group = "ctxmon"

    def __init__(self):
        super().__init__("ctxmon-profile", "ctxmon profile -F 99 -a")

    def argv(self, d):
        return [CTXMON, "profile", "-F", "99", "-a", "--json", "-o",
                os.path.join(d, "profile.json")]

    def collect(self, d):
        with open(os.path.join(d, "profile.json"), errors="replace") as f:
            j = json.load(f)
        l = j.get("loss", {})
        return {"events": l.get("samples"),
                "lost": (l.get("ring_drops", 0) + l.get("counts_full", 0)
                         + l.get("kstack_lost", 0))}


class PerfRecordProfile(Tracer):
    def __init__(self):
        super().__init__("perf-record-profile", "perf record -F 99 -g -a")

    def argv(self, d):
        return ["perf", "record", "-F", "99", "-g", "-a", "-o",
                os.path.join(d, "perf.data")]

    def collect(self, d):
        return perf_collect(d, os.path.join(d, "perf.data"))


def tracecmd_stats(f):
    """Per-CPU kernel buffer statistics stored in a trace.dat: losses are
    overrun + dropped events, events the read events."""
    p = run(["trace-cmd", "report", "--stat", "-i", f], timeout=600)
    lost, read = {}, {}
    cpu = None
    for line in p.stdout.splitlines():
        m = re.match(r"CPU:\s*(\d+)", line)
        if m:
            cpu = int(m.group(1))
            continue
        m = re.match(r"(overrun|commit overrun|dropped events|read events):"
                     r"\s*(\d+)", line.strip())
        if m and cpu is not None:
            if m.group(1) == "read events":
                read[cpu] = int(m.group(2))
            else:
                lost[cpu] = lost.get(cpu, 0) + int(m.group(2))
    n = max([c + 1 for c in list(lost) + list(read)] or [0])
    r = {"file": f, "bytes": fsize(f)}
    if read:
        r["events"] = sum(read.values())
        r["lost"] = sum(lost.values())
        r["lost_per_cpu"] = [lost.get(c, 0) for c in range(n)]
    return r


class TraceCmd(Tracer):
    def __init__(self):
        super().__init__("trace-cmd",
                         "trace-cmd record -e sched_switch -e sched_wakeup")

    def argv(self, d):
        return ["trace-cmd", "record", "-d", "--no-filter", "-e",
                "sched_switch", "-e", "sched_wakeup", "-o",
                os.path.join(d, "trace.dat")]

    def collect(self, d):
        return tracecmd_stats(os.path.join(d, "trace.dat"))


BT_COUNT = """BEGIN { printf("READY\\n"); }
tracepoint:sched:sched_switch { @[cpu] = count(); }
"""

# runqlat.bt (bpftrace's tools/), with the state test of this kernel: a
# preempted task has prev_state TASK_REPORT_MAX (0x100, "R+"), so runnable
# is "no state bit in the low byte".
BT_RUNQLAT = """BEGIN { printf("READY\\n"); }
tracepoint:sched:sched_wakeup, tracepoint:sched:sched_wakeup_new
{
	@qtime[args->pid] = nsecs;
}
tracepoint:sched:sched_switch
{
	if ((args->prev_state & 0xff) == 0) {
		@qtime[args->prev_pid] = nsecs;
	}
	$ns = @qtime[args->next_pid];
	if ($ns) {
		@usecs = hist((nsecs - $ns) / 1000);
	}
	delete(@qtime[args->next_pid]);
}
END { clear(@qtime); }
"""


class Bpftrace(Tracer):
    ready_marker = "READY"
    resend_s = 2

    def __init__(self, key, label, script):
        super().__init__(key, label)
        self.script = script

    def argv(self, d):
        f = os.path.join(d, "script.bt")
        with open(f, "w") as fp:
            fp.write(self.script)
        return ["bpftrace", f]

    def collect(self, d):
        text = open(os.path.join(d, "stdout"), errors="replace").read()
        text += open(os.path.join(d, "stderr"), errors="replace").read()
        lost = sum(int(x) for x in re.findall(r"Lost (\d+) events", text))
        r = {"lost": lost}
        counts = re.findall(r"^@\[(\d+)\]:\s*(\d+)", text, re.M)
        if counts:
            r["events"] = sum(int(c) for _, c in counts)
            r["switches"] = r["events"]
        return r


def discover_tracers():
    """Every tracer that can run here, ctxmon's first."""
    tracers = []
    log("== tracers ==")
    if os.access(os.path.join(HELPERS, "floor"), os.X_OK):
        tracers += [Floor("count"), Floor("ring")]
    else:
        skip("floor tracers", "%s/floor not built" % HELPERS)
    stat_help = ctxmon_help("stat")
    default_backend = None
    backends = []
    if stat_help is None:
        skip("ctxmon stat", "%s stat --help failed" % CTXMON)
    else:
        default_backend, backends = probe_backends(stat_help)
        for b in backends:
            t = CtxmonStat(b, b == default_backend)
            # A quick run measures the default backend and bpf-agg only.
            if not QUICK or b == default_backend or b in AGGREGATING:
                tracers.append(t)
    rec_help = ctxmon_help("record")
    if rec_help is None:
        skip("ctxmon record", "no 'record' command in %s yet" % CTXMON)
    elif "--backend" in rec_help and backends:
        rec_default = probe_record_default()
        for b in backends:
            if b in AGGREGATING:
                continue
            t = CtxmonRecord(b, b == rec_default, rec_help)
            # The other backends' recordings: loss and size on the pipe
            # workload and under saturation; overhead is stat's business.
            t.pipe_only = b != rec_default
            if not QUICK or b == rec_default:
                tracers.append(t)
    else:
        tracers.append(CtxmonRecord(None, True, rec_help))
    lat_help = ctxmon_help("latency")
    if QUICK:
        pass
    elif lat_help is None:
        skip("ctxmon latency", "no 'latency' command in %s yet" % CTXMON)
    else:
        tracers.append(CtxmonOther("latency", lat_help))
    if not QUICK and ctxmon_help("profile") is not None:
        tracers.append(CtxmonProfile())
    if shutil.which("perf"):
        tracers += [PerfSchedRecord(), PerfRecord()]
        if not QUICK:
            tracers.append(PerfRecordProfile())
    else:
        skip("perf sched record, perf record", "perf is not installed")
    if shutil.which("trace-cmd"):
        tracers.append(TraceCmd())
    else:
        skip("trace-cmd record", "trace-cmd is not installed")
    if shutil.which("bpftrace"):
        tracers.append(Bpftrace("bpftrace-count",
                                "bpftrace: count sched_switch per CPU",
                                BT_COUNT))
        tracers.append(Bpftrace("bpftrace-runqlat",
                                "bpftrace: runqlat.bt", BT_RUNQLAT))
    else:
        skip("bpftrace scripts", "bpftrace is not installed")
    tracers = [t for t in tracers if TRACER_RE.search(t.key)]
    for t in tracers:
        log("  %-24s %s" % (t.key, t.label))
    return tracers, default_backend


# Backends that count in the kernel and hand no events up (bpf-agg): a
# recording made with them would be empty.
AGGREGATING = set()

# Backends worth benchmarking: the tracing ones.  The unprivileged tiers
# (perfswitch, proc) cannot see a whole machine's switches.
CANON_BACKENDS = ["bpf", "bpf-agg", "perf", "ftrace", "ftrace-text"]
NOT_BACKENDS = {"auto", "default", "else", "or", "and", "the", "if", "when",
                "first", "then", "name", "loads", "fallback", "otherwise",
                "perfswitch", "proc", "procfs", "taskstats", "unprivileged"}


def probe_record_default():
    """The backend `ctxmon record` picks by default (the recording's
    metadata says), or None."""
    d = tempfile.mkdtemp(dir=TMP)
    f = os.path.join(d, "probe.ctxmon")
    p = run([CTXMON, "record", "-a", "-q", "--duration", "0.3", "-o", f],
            timeout=60)
    info = recinfo(f) if p.returncode == 0 else None
    be = info.get("backend") if info else None
    log("  ctxmon record's default backend: %s" % (be or "unknown"))
    shutil.rmtree(d, ignore_errors=True)
    return be


def probe_backends(stat_help):
    """(default backend, [backends that capture here]) from stat --help
    and a short capture with each."""
    names = []
    m = re.search(r"--backend NAME\s+(.*?)\n\s*-", stat_help, re.S)
    if m:
        for w in re.findall(r"[a-z][a-z0-9_-]*", m.group(1)):
            if w not in NOT_BACKENDS and w not in names and \
                    w not in ("capture", "backend", "default"):
                names.append(w)
    for b in CANON_BACKENDS:
        if b not in names:
            names.append(b)
    ok = []
    d = tempfile.mkdtemp(dir=TMP)
    f = os.path.join(d, "probe.json")
    p = run([CTXMON, "stat", "-a", "--duration", "0.3", "--json", "-o", f],
            timeout=60)
    default = None
    if p.returncode == 0:
        try:
            default = json.load(open(f)).get("backend")
        except (ValueError, OSError):
            pass
    else:
        skip("ctxmon stat -a", tail(p.stderr))
    for b in names:
        p = run([CTXMON, "stat", "-a", "--backend", b, "--duration", "0.3",
                 "--json", "-o", f], timeout=60)
        if p.returncode == 0:
            ok.append(b)
            try:
                if json.load(open(f))["capture"]["events"] == 0:
                    AGGREGATING.add(b)
            except (ValueError, OSError, KeyError, TypeError):
                pass
        elif b in CANON_BACKENDS:
            skip("ctxmon --backend %s" % b, tail(p.stderr, 1))
    log("  ctxmon backends: %s (default: %s%s)" % (
        ", ".join(ok) or "none", default,
        "; counting in the kernel: " + ", ".join(sorted(AGGREGATING))
        if AGGREGATING else ""))
    return default, ok


# ---------------------------------------------------------------- sessions

class Session:
    """One tracer running, pinned to TRACER_CPU, its files in a fresh
    directory; stop() ends it with SIGINT as a user would."""

    def __init__(self, tracer):
        self.t = tracer
        self.d = tempfile.mkdtemp(prefix=tracer.key + ".", dir=TMP)
        self.out = open(os.path.join(self.d, "stdout"), "w")
        self.err = open(os.path.join(self.d, "stderr"), "w")
        self.p = spawn(["taskset", "-c", TRACER_CPU] + tracer.argv(self.d),
                       stdout=self.out, stderr=self.err, cwd=self.d)
        self.t0 = time.monotonic()
        self.rc = None

    def wait_ready(self):
        """None when the tracer is attached, else why not."""
        deadline = time.monotonic() + 60
        if self.t.ready_marker:
            while time.monotonic() < deadline:
                if self.p.poll() is not None:
                    break
                with open(os.path.join(self.d, "stdout"),
                          errors="replace") as f:
                    if self.t.ready_marker in f.read():
                        time.sleep(0.2)
                        return None
                time.sleep(0.05)
        else:
            # Attached = set-up done: after SETTLE, the tracer's processes
            # use under 20% of a CPU over half a second (perf synthesizes
            # every task first; started late, it would be starved by a
            # workload on its CPU and miss its start).
            time.sleep(SETTLE)
            last = group_cpu_ticks(self.p.pid)
            while time.monotonic() < deadline and self.p.poll() is None:
                time.sleep(0.5)
                now = group_cpu_ticks(self.p.pid)
                if now - last <= 0.2 * 0.5 * CLK_TCK:
                    break
                last = now
        if self.p.poll() is not None:
            return "exited with %s before the workload: %s" % (
                self.p.returncode, tail(os.path.join(self.d, "stderr")))
        if self.t.ready_marker:
            return "not ready after 60 s"
        return None

    def stop(self):
        """SIGINT to the main thread (a process-directed signal may land
        on a helper thread, and bpftrace 0.17 then never leaves its
        epoll_wait); again every resend_s seconds for tools that need it;
        then SIGTERM, SIGKILL."""
        t0 = time.monotonic()
        for sig, wait in ((signal.SIGINT, self.t.stop_timeout),
                          (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            deadline = time.monotonic() + wait
            while self.p.poll() is None and time.monotonic() < deadline:
                if not tgkill(self.p.pid, sig):
                    break
                try:
                    self.p.wait(min(self.t.resend_s,
                                    max(deadline - time.monotonic(), 0.1)))
                except subprocess.TimeoutExpired:
                    pass
            if self.p.poll() is not None:
                break
            log("    %s did not stop on signal %d" % (self.t.key, sig))
        self.rc = self.p.wait()
        reaped(self.p)
        self.out.close()
        self.err.close()
        self.stop_s = time.monotonic() - t0
        return self.rc

    def collect(self):
        try:
            r = self.t.collect(self.d) or {}
        except (OSError, ValueError, KeyError, IndexError) as e:
            r = {"error": "could not read its output: %s" % e}
        r["rc"] = self.rc
        r["stderr"] = tail(os.path.join(self.d, "stderr"), 4)
        return r

    def cleanup(self):
        if not KEEP:
            shutil.rmtree(self.d, ignore_errors=True)


def traced(tracer, fn):
    """Run fn() under tracer; returns (fn's result, what the tracer said)
    or (None, None) after a skip."""
    if tracer.broken:
        return None, None
    s = Session(tracer)
    why = s.wait_ready()
    if why:
        s.stop()
        tracer.broken = why
        skip(tracer.label, why)
        s.cleanup()
        return None, None
    try:
        res = fn()
    except RuntimeError as e:
        s.stop()
        skip("%s (workload under it)" % tracer.label, str(e))
        s.cleanup()
        return None, None
    s.stop()
    info = s.collect()
    info["stop_s"] = s.stop_s
    return res, (info, s)


# ---------------------------------------------------------------- sections

def fmt_ratio(r):
    return "%.2fx" % r if r is not None else "-"


def fmt_n(n):
    if n is None:
        return "-"
    return "{:,}".format(int(n))


def overhead_section(wls, tracers):
    """Workload time traced / untraced; also the loss at the pipe rate and
    the bytes per event of the recorders, from the same sessions."""
    log("\n== capture overhead: %d runs each, tracer on CPU %s ==" % (
        RUNS, TRACER_CPU))
    res = {}
    for wl in wls:
        log("-- %s: %s" % (wl.key, wl.label))
        base = []
        try:
            wl.run()   # warm-up: page cache, CPU frequency
            base = [wl.run() for _ in range(RUNS)]
        except RuntimeError as e:
            skip("workload %s" % wl.key, str(e))
            continue
        row = {"untraced": {"runs": base}}
        log("  %-44s %s" % ("untraced", " ".join(
            "%.3f" % r["s"] for r in base)))
        # Two untraced runs before each session too: the machine drifts
        # (the host's load, frequency), so each session is compared with
        # the untraced runs just before and just after it.
        mid = []
        groups = [base]
        for t in tracers:
            if t.pipe_only and wl.key != "pipe":
                continue
            g = []
            for _ in range(2):
                try:
                    g.append(wl.run())
                except RuntimeError:
                    pass
            mid += g
            groups.append(g)
            runs, info = traced(t, lambda: [wl.run() for _ in range(RUNS)])
            if runs is None:
                continue
            inf, s = info
            s.cleanup()
            row[t.key] = {"runs": runs, "tracer": inf,
                          "group": len(groups) - 1}
            log("  %-44s %s  events %s lost %s" % (
                t.label, " ".join("%.3f" % r["s"] for r in runs),
                fmt_n(inf.get("events")), fmt_n(inf.get("lost"))))
            if inf.get("rc") not in (0, None) and t.group == "ctxmon":
                log("    exit %s: %s" % (inf["rc"], inf["stderr"]))
        try:
            base2 = [wl.run() for _ in range(RUNS)]
        except RuntimeError as e:
            base2 = []
        row["untraced"]["runs_after"] = base2
        row["untraced"]["runs_between"] = mid
        log("  %-44s %s" % ("untraced (again)", " ".join(
            "%.3f" % r["s"] for r in base2)))
        log("  %-44s %s" % ("untraced (between sessions)", " ".join(
            "%.3f" % r["s"] for r in mid)))
        allb = sorted(r["s"] for r in base + mid + base2)
        b = median(allb)
        row["untraced"]["median"] = b
        # Noise: the interquartile range of the untraced runs, relative.
        q = len(allb) // 4
        row["untraced"]["noise"] = (allb[-1 - q] - allb[q]) / b if b else 0
        row["untraced"]["switch_rate"] = median(
            [r["switches"] / r["s"] for r in base + mid + base2])
        # Best of: this VM is bimodal (whole runs in a fast or a slow mode,
        # the slow share changing with time); the fastest run measures the
        # tracer's cost without the host's.
        row["untraced"]["min"] = allb[0] if allb else None
        groups.append(base2)
        for k, v in row.items():
            if k == "untraced":
                continue
            i = v.pop("group")
            after = next((g for g in groups[i + 1:] if g), [])
            local = median([r["s"] for r in groups[i] + after])
            v["baseline"] = local
            v["median"] = median([r["s"] for r in v["runs"]])
            v["ratio"] = v["median"] / local if local else None
            v["min"] = min(r["s"] for r in v["runs"])
            v["ratio_min"] = v["min"] / allb[0] if allb else None
            v["switch_rate"] = median([r["switches"] / r["s"]
                                       for r in v["runs"]])
        res[wl.key] = row
    RESULTS["overhead"] = res
    return res


def saturation_section(tracers):
    log("\n== lost events with both CPUs saturated: %s, %.0f s ==" % (
        Saturation.label, SAT_SECONDS))
    sat = Saturation()
    res = {}
    base = sat.run()
    res["untraced"] = {"switch_rate": base["switches"] / base["s"]}
    log("  %-44s %s switches/s" % ("untraced", fmt_n(
        res["untraced"]["switch_rate"])))
    for t in tracers:
        r, info = traced(t, sat.run)
        if r is None:
            continue
        inf, s = info
        s.cleanup()
        res[t.key] = {"switch_rate": r["switches"] / r["s"], "tracer": inf}
        log("  %-44s %s switches/s  events %s lost %s per CPU %s" % (
            t.label, fmt_n(res[t.key]["switch_rate"]),
            fmt_n(inf.get("events")), fmt_n(inf.get("lost")),
            inf.get("lost_per_cpu")))
    RESULTS["saturation"] = res
    return res


def time_cmd(argv, runs):
    """Median wall time of argv (stdout to /dev/null), on every CPU: the
    analyses run offline, where a tool may use them all (ctxmon report
    decodes on both; perf and trace-cmd use one)."""
    ts = []
    for _ in range(runs):
        t0 = time.monotonic()
        p = subprocess.run(argv,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True,
                           errors="replace")
        ts.append(time.monotonic() - t0)
        if p.returncode != 0:
            return None, tail(p.stderr)
    return median(ts), ts


CPU_GAUGE = "s = 0\nfor i in range(4000000):\n    s += i\n"


def cpu_speeds():
    """Seconds a fixed Python loop takes pinned to each CPU, best of 3.
    On a VM one vCPU can run at a fraction of the other's speed for
    minutes (its host core shared), which no count of threads can make
    up for: the parallel rows are read against this."""
    out = []
    for cpu in range(os.cpu_count() or 1):
        best = None
        for _ in range(3):
            t0 = time.monotonic()
            p = subprocess.run(["taskset", "-c", str(cpu), sys.executable,
                                "-c", CPU_GAUGE],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            t = time.monotonic() - t0
            if p.returncode != 0:
                return None
            best = t if best is None else min(best, t)
        out.append(round(best, 3))
    return out


def analysis_section(tracers):
    """Offline analysis throughput on recordings of the same pipe run."""
    log("\n== offline analysis: recordings of perf bench sched pipe -l %d "
        "on CPU 0 ==" % ANALYSIS_LOOPS)
    perf = shutil.which("perf")
    if not perf:
        skip("analysis", "perf is not installed")
        return {}
    wl = Workload("pipe", "pipe", "0",
                  [perf, "bench", "sched", "pipe", "-l", str(ANALYSIS_LOOPS)],
                  r"Total time:\s*([\d.]+)")
    by_key = {t.key: t for t in tracers}
    recorders = [k for k in ("perf-sched-record", "trace-cmd") if k in by_key]
    recorders += [t.key for t in tracers if isinstance(t, CtxmonRecord) and
                  "(default)" in t.label or t.key == "ctxmon-record"][:1]
    rec = {}
    for k in recorders:
        r, info = traced(by_key[k], wl.run)
        if r is None:
            continue
        rec[k] = info
    rep_help = ctxmon_help("report")
    jobs = []
    if "perf-sched-record" in rec:
        inf, s = rec["perf-sched-record"]
        f = inf["file"]
        jobs.append(("perf sched latency", ["perf", "sched", "latency",
                                            "-i", f], inf))
        jobs.append(("perf sched timehist", ["perf", "sched", "timehist",
                                             "-i", f], inf))
    if "trace-cmd" in rec:
        inf, s = rec["trace-cmd"]
        # Count what trace-cmd report prints, once.
        p = subprocess.Popen(["trace-cmd", "report", "-i", inf["file"]],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True,
                             errors="replace")
        n = sw = 0
        for line in p.stdout:
            if ": sched_" in line:
                n += 1
                if "sched_switch:" in line:
                    sw += 1
        p.wait()
        inf["events"], inf["switches"] = n, sw
        jobs.append(("trace-cmd report", ["trace-cmd", "report", "-i",
                                          inf["file"]], inf))
    ctx_key = next((k for k in rec if k.startswith("ctxmon-record")), None)
    if ctx_key:
        inf, s = rec[ctx_key]
        if rep_help is None:
            skip("ctxmon report", "no 'report' command in %s yet" % CTXMON)
        else:
            arg = ["-i", inf["file"]] if re.search(
                r"(^|\s)-i\b|--input", rep_help) else [inf["file"]]
            jobs.append(("ctxmon report", [CTXMON, "report"] + arg, inf))
            jobs.append(("ctxmon report, one thread", [
                "env", "CTXMON_READ_THREADS=1", CTXMON, "report"] + arg,
                inf))
        if inf.get("read_s"):
            recinfo = os.path.join(HELPERS, "recinfo")
            jobs.append(("(libctxmon reader: decode only)",
                         [recinfo, inf["file"]], inf))
            jobs.append(("(libctxmon reader: decode only, one thread)",
                         ["env", "CTXMON_READ_THREADS=1", recinfo,
                          inf["file"]], inf))
    elif rep_help is None:
        skip("ctxmon report", "no 'report' command in %s yet" % CTXMON)
    # Rounds that run every analysis once, so that a change in the
    # machine's speed during the section (a vCPU slowed by its host)
    # falls on all of them alike.
    speeds = {"before": cpu_speeds()}
    log("  CPU gauge before (s per CPU, lower is faster): %s" %
        speeds["before"])
    runs = {name: [] for name, _, _ in jobs}
    failed = {}
    for _ in range(RUNS):
        for name, argv, inf in jobs:
            if name in failed:
                continue
            t, ts = time_cmd(argv, 1)
            if t is None:
                failed[name] = ts
                continue
            runs[name].append(t)
    speeds["after"] = cpu_speeds()
    log("  CPU gauge after: %s" % speeds["after"])
    RESULTS["analysis_cpu_gauge"] = speeds
    res = {}
    for name, argv, inf in jobs:
        if name in failed:
            skip(name, failed[name])
            continue
        ts = runs[name]
        t = median(ts)
        ev, sw = inf.get("events"), inf.get("switches")
        res[name] = {"s": t, "runs": ts, "events": ev, "switches": sw,
                     "lost": inf.get("lost"),
                     "events_per_s": ev / t if ev and t else None,
                     "switches_per_s": sw / t if sw and t else None,
                     "argv": " ".join(argv)}
        log("  %-32s %8.3f s  %s events  %s events/s  %s switches/s  "
            "(lost in file: %s)" % (
                name, t, fmt_n(ev), fmt_n(res[name]["events_per_s"]),
                fmt_n(res[name]["switches_per_s"]), fmt_n(inf.get("lost"))))
    for k, (inf, s) in rec.items():
        s.cleanup()
    RESULTS["analysis"] = res
    return res


def bpf_progs():
    """{id: (name, run_cnt, run_time_ns)} of the loaded BPF programs."""
    p = run(["bpftool", "prog", "show", "-j"], timeout=60)
    try:
        return {x["id"]: (x.get("name", "?"), x.get("run_cnt", 0),
                          x.get("run_time_ns", 0))
                for x in json.loads(p.stdout or "[]")}
    except (ValueError, KeyError, TypeError):
        return None


def bpfcost_section(tracers):
    """In-kernel cost of the BPF tracers, free of the host's noise: with
    kernel.bpf_stats_enabled, the run count and run time of each BPF
    program the tracer loaded, over one pipe run.  (bpf_stats adds its
    own clock reads, ~20-40 ns a run, to every program alike; it does not
    see the cost of the attachment itself: a `tracepoint:` program, as
    bpftrace attaches, also pays for the perf trace buffer it is handed,
    a tp_btf one does not.)"""
    log("\n== in-kernel BPF time per event: perf bench sched pipe -l %d "
        "on CPU 0, kernel.bpf_stats_enabled=1 ==" % PIPE_LOOPS)
    perf = shutil.which("perf")
    if not shutil.which("bpftool") or not perf:
        skip("BPF cost", "bpftool or perf is not installed")
        return {}
    try:
        with open("/proc/sys/kernel/bpf_stats_enabled") as f:
            old = f.read().strip()
    except OSError as e:
        skip("BPF cost", "kernel.bpf_stats_enabled: %s" % e)
        return {}
    wl = Workload("pipe", "pipe", "0",
                  [perf, "bench", "sched", "pipe", "-l", str(PIPE_LOOPS)],
                  r"Total time:\s*([\d.]+)")
    bpf_keys = [t for t in tracers if t.key.startswith(("bpftrace",
                                                          "floor-")) or
                re.match(r"ctxmon-(stat|record)-bpf", t.key) or
                (t.key == "ctxmon-latency")]
    res = {}

    def measure():
        before = bpf_progs()
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write("1")
        try:
            s0 = bpf_progs()
            r = wl.run()
            s1 = bpf_progs()
        finally:
            with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
                f.write(old)
        return before, s0, s1, r

    # The host's speed drifts by 10-20% over minutes: every tracer is
    # measured once per round, the rounds interleaved, and the round with
    # its median time kept (all rounds in "rounds").
    runs = {}
    for rnd in range(BPFCOST_ROUNDS):
        for t in bpf_keys:
            ids0 = bpf_progs() or {}
            out, info = traced(t, measure)
            if out is None:
                continue
            info[1].cleanup()
            _, s0, s1, r = out
            progs = []
            for pid, (name, n1, t1) in (s1 or {}).items():
                if pid in ids0 or pid not in (s0 or {}):
                    continue   # not this tracer's
                n = n1 - s0[pid][1]
                ns = t1 - s0[pid][2]
                if n > 0:
                    progs.append({"name": name, "runs": n, "ns": ns,
                                  "ns_per_run": ns / n})
            progs.sort(key=lambda x: -x["ns"])
            total = sum(x["ns"] for x in progs)
            runs.setdefault(t.key, []).append(
                {"progs": progs, "ns_total": total,
                 "ns_per_loop": total / PIPE_LOOPS,
                 "switches": r["switches"]})
            log("  round %d %-44s %6.0f ns of BPF per pipe round trip: %s" % (
                rnd + 1, t.label, total / PIPE_LOOPS, ", ".join(
                    "%s %d x %.0f ns" % (x["name"], x["runs"],
                                         x["ns_per_run"])
                    for x in progs if x["runs"] >= PIPE_LOOPS / 10)))
    for t in bpf_keys:
        rs = runs.get(t.key)
        if not rs:
            continue
        keep = sorted(rs, key=lambda x: x["ns_total"])[(len(rs) - 1) // 2]
        res[t.key] = dict(keep, rounds=[x["ns_per_loop"] for x in rs])
        log("  %-44s %6.0f ns of BPF per pipe round trip (median of %s)" % (
            t.label, keep["ns_per_loop"],
            " ".join("%.0f" % x["ns_per_loop"] for x in rs)))
    RESULTS["bpfcost"] = res
    return res


def rss_sample(pid):
    v = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    v[line.split(":")[0]] = int(line.split()[1])
    except OSError:
        pass
    return v


def child_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            c = f.read().split()
            return int(c[0]) if c else None
    except OSError:
        return None


def rss_commands():
    cmds = []
    if ctxmon_help("stat") is not None:
        cmds.append(("ctxmon stat -a", [CTXMON, "stat", "-a", "-o",
                                         "/dev/null"]))
        cmds.append(("ctxmon stat -a -I 1000 --json",
                     [CTXMON, "stat", "-a", "-I", "1000", "--json", "-o",
                      "/dev/null"]))
    top_help = ctxmon_help("top")
    if top_help is None:
        skip("ctxmon top RSS", "no 'top' command in %s yet" % CTXMON)
    else:
        a = [CTXMON, "top"]
        for opt in ("--batch", "-b"):
            if re.search(r"(^|[\s,])%s\b" % re.escape(opt), top_help):
                a.append(opt)
                break
        cmds.append(("ctxmon " + " ".join(a[1:]), a))
    return cmds


def rss_run(cmds, load_argv, durations, tag, res):
    """Every command for every duration, all at once over one load;
    /usr/bin/time -v gives the peak, /proc/PID/status VmRSS (each second)
    the curve.  Results go to res[name][tag + duration]."""
    load = spawn(load_argv, stdout=subprocess.DEVNULL)
    procs = []
    for name, argv in cmds:
        for dur in durations:
            tf = os.path.join(TMP, "time.%s.%d.%d" % (tag, len(procs), dur))
            p = spawn(["taskset", "-c", TRACER_CPU, "/usr/bin/time", "-v",
                       "-o", tf] + argv, stdout=subprocess.DEVNULL,
                      stderr=open(tf + ".err", "w"))
            procs.append({"name": name, "dur": dur, "p": p, "tf": tf,
                          "samples": [], "child": None})
    t0 = time.monotonic()
    while any(x["p"].poll() is None for x in procs):
        el = time.monotonic() - t0
        for x in procs:
            if x["p"].poll() is not None:
                continue
            if x["child"] is None:
                x["child"] = child_of(x["p"].pid)
            if x["child"]:
                s = rss_sample(x["child"])
                if s:
                    x["samples"].append((round(el, 1), s.get("VmRSS")))
            if el >= x["dur"] and x["child"] and not x.get("stopped"):
                os.kill(x["child"], signal.SIGINT)
                x["stopped"] = el
            if el >= x["dur"] + 60:
                x["p"].kill()
        time.sleep(1)
    os.killpg(load.pid, signal.SIGKILL)
    load.wait()
    reaped(load)
    for x in procs:
        reaped(x["p"])
    for x in procs:
        text = open(x["tf"], errors="replace").read() \
            if os.path.exists(x["tf"]) else ""
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        r = res.setdefault(x["name"], {})
        # Steady state: from a third of the run (start-up done) to its end.
        mid = [(t, v) for t, v in x["samples"]
               if v and x["dur"] / 3 <= t <= x["dur"]]
        growth = None
        if len(mid) >= 2 and mid[-1][0] > mid[0][0]:
            growth = (mid[-1][1] - mid[0][1]) * 60.0 / \
                (mid[-1][0] - mid[0][0])
        r[tag + str(x["dur"])] = {
            "max_rss_kb": int(m.group(1)) if m else None,
            "rc": x["p"].returncode, "rss_kb": x["samples"],
            "rss_from_kb": mid[0][1] if mid else None,
            "rss_to_kb": mid[-1][1] if mid else None,
            "growth_kb_per_min": growth,
            "err": tail(x["tf"] + ".err")}
        log("  %-30s %-6s %3d s: peak %s KiB (rc %s)  RSS %s -> %s KiB "
            "from %d s on (%s KiB/min)" % (
                x["name"], tag or "fork", x["dur"],
                fmt_n(r[tag + str(x["dur"])]["max_rss_kb"]),
                x["p"].returncode, fmt_n(mid[0][1] if mid else None),
                fmt_n(mid[-1][1] if mid else None), x["dur"] // 3,
                fmt_n(growth)))
        if x["p"].returncode not in (0, 130, 2):
            log("    %s" % r[tag + str(x["dur"])]["err"])


def rss_section():
    """Peak RSS of system-wide captures, RSS_SHORT vs RSS_LONG seconds,
    all running at once over the same load: bench/mixed in a loop (a
    process fork+exec+exit every few ms, new threads, pipes, futexes).
    Then RSS_LONG seconds over a steady load that creates no tasks (a pipe
    pair on CPU 0), which tells growth with time from growth with the
    number of tasks seen."""
    log("\n== peak RSS: %d s vs %d s system-wide captures; loads: "
        "bench/mixed in a loop on CPUs 0-1 (fork), a pipe pair on CPU 0 "
        "(steady) ==" % (RSS_SHORT, RSS_LONG))
    cmds = rss_commands()
    if not cmds:
        return {}
    res = {}
    mixed = os.path.join(HELPERS, "mixed")
    rss_run(cmds, ["taskset", "-c", "0,1", "sh", "-c",
                   "while :; do %s 1 >/dev/null || exit; done" % mixed],
            (RSS_SHORT, RSS_LONG), "", res)
    rss_run(cmds, ["taskset", "-c", "0", "perf", "bench", "sched", "pipe",
                   "-l", "1000000000"], (RSS_LONG,), "steady-", res)
    RESULTS["rss"] = res
    return res


# ---------------------------------------------------------------- report

def added(row, key, which="ratio"):
    v = row.get(key)
    return v[which] - 1 if v and v.get(which) is not None else None


def target(name, ok, detail, state=None):
    state = state or ("n/a" if ok is None else ("MET" if ok else "MISSED"))
    RESULTS["targets"].append({"target": name, "state": state,
                               "detail": detail})


def evaluate(tracers, default_backend):
    ov = RESULTS.get("overhead", {})
    pipe = ov.get("pipe", {})
    rec_key = next((t.key for t in tracers if t.default_record), None)
    stat_key = "ctxmon-stat-%s" % default_backend
    def versus(name, row, mine, peer, factor):
        """The added overhead of mine <= factor x peer's, judged on the
        medians and on the best runs: MET or MISSED when both agree (a
        median miss smaller than the untraced runs' spread counts as
        agreeing with a best-of pass), else "unclear"."""
        noise = row.get("untraced", {}).get("noise") or 0.0
        verdicts, parts = [], []
        for which, what in (("ratio", "median"), ("ratio_min", "best")):
            a, b = added(row, mine, which), added(row, peer, which)
            parts.append("%s: +%s vs +%s" % (what, pct(a), pct(b)))
            if a is None or b is None:
                verdicts.append(None)
                continue
            lim = factor * max(b, 0.0)
            verdicts.append("met" if a <= lim else
                            "noise" if which == "ratio" and
                            a <= lim + noise else "missed")
        detail = "%s vs %s: %s; noise (IQR of untraced runs) %s" % (
            mine, peer, ", ".join(parts), pct(noise))
        if None in verdicts:
            target(name, None, detail)
        elif "met" in verdicts and "missed" not in verdicts:
            target(name, True, detail)
        elif verdicts == ["missed", "missed"] or \
                verdicts == ["noise", "missed"]:
            target(name, False, detail)
        else:
            target(name, None, detail, "unclear (median and best disagree)")

    # 1. record vs perf sched record, pipe workload.
    if rec_key:
        versus("record's added overhead <= 40% of perf sched record's "
               "(pipe)", pipe, rec_key, "perf-sched-record", 0.4)
    # 2. stat vs bpftrace count, every workload.
    for wk, row in ov.items():
        versus("stat's added overhead <= 1.2x bpftrace count's (%s)" % wk,
               row, stat_key, "bpftrace-count", 1.2)
    # 2b. the same on the in-kernel BPF time, which the host's noise does
    # not move (a proxy: it leaves out the cost of the attachment).
    bc = RESULTS.get("bpfcost", {})
    a = bc.get(stat_key, {}).get("ns_per_loop")
    b = bc.get("bpftrace-count", {}).get("ns_per_loop")
    if a and b:
        target("stat's in-kernel BPF time <= 1.2x bpftrace count's (pipe, "
               "bpf_stats; proxy)", a <= 1.2 * b,
               "%.0f vs %.0f ns per round trip (%.1fx)" % (a, b, a / b))
    # 2c. issue 14: stat and record against untraced on the pipe, and
    # the aggregation's in-kernel time against what the floors take for
    # the same events: the counter's sched_switch (its two per round trip)
    # plus the ring's sched_waking (the one event a waking adds).
    for key, lim in ((stat_key, 1.10), (rec_key, 1.15)):
        v = pipe.get(key) if key else None
        if not v or v.get("ratio") is None:
            continue
        floors = ", ".join(
            "%s %.2fx" % (f, pipe[f]["ratio"]) for f in ("floor-count",
                                                          "floor-ring")
            if pipe.get(f, {}).get("ratio") is not None)
        target("%s <= %.2fx untraced (pipe, median)" % (key, lim),
               v["ratio"] <= lim,
               "%.2fx (best %.2fx); floors %s; noise (IQR of untraced "
               "runs) %s" % (v["ratio"], v.get("ratio_min") or 0, floors,
                             pct(pipe.get("untraced", {}).get("noise"))))
    fc = bc.get("floor-count", {}).get("ns_per_loop")
    fr = bc.get("floor-ring", {})
    a = bc.get(stat_key, {}).get("ns_per_loop")
    if fc and fr.get("ns_per_loop") and a:
        loops = fr["ns_total"] / fr["ns_per_loop"]
        wk = sum(p["ns"] for p in fr.get("progs", [])
                 if p["name"].endswith("_waking")) / loops
        lim = 1.5 * (fc + wk)
        target("stat's in-kernel BPF time <= 1.5x (floor counter + floor "
               "ring's waking part) (pipe, bpf_stats)", a <= lim,
               "%.0f vs 1.5 x (%.0f + %.0f) = %.0f ns per round trip" % (
                   a, fc, wk, lim))
    # 3. losses, of the default stat and record (the other backends'
    # are in the table).
    mine = [k for k in (stat_key, rec_key) if k]
    for k in mine:
        v = pipe.get(k, {}).get("tracer", {})
        if v.get("lost") is None:
            continue
        target("0 lost at the pipe rate: %s" % k, v["lost"] == 0,
               "lost %s, %s events" % (fmt_n(v["lost"]),
                                       fmt_n(v.get("events"))))
    sat = RESULTS.get("saturation", {})
    # Peers that stream events out (bpftrace counts in the kernel).
    peers = {k: v["tracer"]["lost"] for k, v in sat.items()
             if k in ("perf-sched-record", "perf-record", "trace-cmd") and
             v["tracer"].get("lost") is not None}
    for k in mine:
        v = sat.get(k, {}).get("tracer", {})
        if v.get("lost") is None:
            continue
        lost = v["lost"]
        per = v.get("lost_per_cpu") or []
        located = sum(per) == lost
        least = min(peers.values()) if peers else None
        ok = located and (lost == 0 or (least is not None and
                                        lost * 10 <= least))
        target("saturation: 0 lost or far below every peer, located: %s"
               % k, ok, "lost %s (per CPU %s) vs peers' %s" % (
                   fmt_n(lost), ", ".join(fmt_n(x) for x in per),
                   ", ".join("%s %s" % (pk, fmt_n(pv))
                             for pk, pv in peers.items())))
    # 4. bytes per event.
    if rec_key and rec_key in pipe:
        inf = pipe[rec_key]["tracer"]
        bpe = inf["bytes"] / inf["events"] if inf.get("bytes") and \
            inf.get("events") else None
        target("record <= 5 bytes/event", None if bpe is None else
               bpe <= 5, "%.2f bytes/event" % bpe if bpe else "-")
    else:
        target("record <= 5 bytes/event", None, "no ctxmon record")
    # 5. analysis.
    an = RESULTS.get("analysis", {})
    a = an.get("ctxmon report", {}).get("events_per_s")
    b = an.get("perf sched latency", {}).get("events_per_s")
    target("report >= 10x perf sched latency's events/s",
           None if not a or not b else a >= 10 * b,
           "%s vs %s events/s" % (fmt_n(a), fmt_n(b)))
    # The same, per switch of the workload: the two files hold the same
    # switches but not the same number of other events (perf's has every
    # wakeup, ctxmon's only those the numbers need), so this is the time
    # each takes for the same run.
    a = an.get("ctxmon report", {}).get("switches_per_s")
    b = an.get("perf sched latency", {}).get("switches_per_s")
    target("report >= 10x perf sched latency's sched_switch/s (same run)",
           None if not a or not b else a >= 10 * b,
           "%s vs %s sched_switch/s" % (fmt_n(a), fmt_n(b)))
    for what, par, one in (
            ("report", "ctxmon report", "ctxmon report, one thread"),
            ("decode", "(libctxmon reader: decode only)",
             "(libctxmon reader: decode only, one thread)")):
        p, o = an.get(par, {}), an.get(one, {})
        ev = p.get("events")
        ok = None
        if p.get("s") and o.get("s") and ev:
            ok = ev >= 10e6 and o["s"] >= 2 * p["s"]
        g = RESULTS.get("analysis_cpu_gauge") or {}
        gauge = "; CPU gauge %s before, %s after" % (
            "/".join("%.2f" % x for x in g["before"]),
            "/".join("%.2f" % x for x in g["after"])) \
            if g.get("before") and g.get("after") else ""
        target("%s on both CPUs >= 2x faster than on one, file >= 10 M "
               "events" % what, ok,
               "%.3f s vs %.3f s, %s events%s" % (
                   p.get("s") or 0, o.get("s") or 0, fmt_n(ev), gauge))
    # 6. RSS.
    for name, r in RESULTS.get("rss", {}).items():
        s, l = r.get(str(RSS_SHORT), {}), r.get(str(RSS_LONG), {})
        a, b = s.get("max_rss_kb"), l.get("max_rss_kb")
        # Peak of the long run within 10% (+1 MiB) of the short one's, and
        # the long run's RSS flat after start-up (within 5%, +1 MiB): a
        # start-up peak (loading BPF, BTF) can hide a slow climb.
        f, t = l.get("rss_from_kb"), l.get("rss_to_kb")
        ok = None
        if a and b:
            ok = b <= a * 1.10 + 1024
            if f and t:
                ok = ok and t <= f * 1.05 + 1024
        st = r.get("steady-%d" % RSS_LONG, {})
        sf, stt = st.get("rss_from_kb"), st.get("rss_to_kb")
        if ok is not None and sf and stt:
            ok = ok and stt <= sf * 1.05 + 1024
        target("RSS does not grow with duration: %s" % name, ok,
               "fork load: peak %s KiB at %d s, %s KiB at %d s, RSS %s -> "
               "%s KiB from %d s to %d s; steady load: RSS %s -> %s KiB" % (
                   fmt_n(a), RSS_SHORT, fmt_n(b), RSS_LONG, fmt_n(f),
                   fmt_n(t), RSS_LONG // 3, RSS_LONG, fmt_n(sf),
                   fmt_n(stt)))


def pct(x):
    return "%.0f%%" % (100 * x) if x is not None else "-"


def tables(tracers):
    """The result tables as markdown (printed and written)."""
    L = []
    ov = RESULTS.get("overhead", {})
    sat = RESULTS.get("saturation", {})
    if ov:
        wks = list(ov)
        L.append("### Capture overhead (workload time traced / untraced, "
                 "median of %d runs)\n" % RUNS)
        L.append("Each traced median is divided by the median of the "
                 "untraced runs just before and just after its session "
                 "(2 + 2 runs); the noise row is the spread (IQR / median) "
                 "of all untraced runs of the workload.\n")
        L.append("| tracer | " + " | ".join(wks) + " |")
        L.append("|---|" + "---:|" * len(wks))
        L.append("| untraced (s) | " + " | ".join(
            "%.3f s" % ov[w]["untraced"]["median"] for w in wks) + " |")
        L.append("| untraced (switches/s) | " + " | ".join(
            fmt_n(ov[w]["untraced"]["switch_rate"]) for w in wks) + " |")
        L.append("| untraced noise (IQR / median) | " + " | ".join(
            pct(ov[w]["untraced"].get("noise")) for w in wks) + " |")
        for t in tracers:
            if not any(t.key in ov[w] for w in wks):
                continue
            L.append("| %s | " % t.label + " | ".join(
                fmt_ratio(ov[w].get(t.key, {}).get("ratio")) for w in wks)
                + " |")
        L.append("")
        L.append("Best of %d (fastest traced run / fastest untraced run of "
                 "the workload; this VM runs in a fast and a slow mode, "
                 "the fastest run shows the tracer's own cost):\n" % RUNS)
        L.append("| tracer | " + " | ".join(wks) + " |")
        L.append("|---|" + "---:|" * len(wks))
        L.append("| untraced, fastest (s) | " + " | ".join(
            "%.3f s" % ov[w]["untraced"]["min"]
            if ov[w]["untraced"].get("min") else "-" for w in wks) + " |")
        for t in tracers:
            if not any(t.key in ov[w] for w in wks):
                continue
            L.append("| %s | " % t.label + " | ".join(
                fmt_ratio(ov[w].get(t.key, {}).get("ratio_min"))
                for w in wks) + " |")
        L.append("")
    floors = [(k, f) for k, f in FLOOR_OF.items()
              if any(k in ov[w] and f in ov[w] for w in ov)]
    if floors:
        wks = list(ov)
        L.append("### Added cost against the floor\n")
        L.append("(ctxmon's ratio - 1) / (the floor's ratio - 1), from the "
                 "medians above: how many times the kernel's least cost "
                 "for the same kind of tracer ctxmon adds.  Aggregation is "
                 "compared with the counter, streaming with the ring.  '-' "
                 "where the floor's own cost is within 1% (a quotient of "
                 "noise).\n")
        L.append("| tracer | floor | " + " | ".join(wks) + " |")
        L.append("|---|---|" + "---:|" * len(wks))
        lab = {t.key: t.label for t in tracers}
        for k, f in floors:
            cells = []
            for w in wks:
                a = ov[w].get(k, {}).get("ratio")
                b = ov[w].get(f, {}).get("ratio")
                cells.append("%.1fx" % ((a - 1) / (b - 1))
                             if a and b and b > 1.01 else "-")
            L.append("| %s | %s | " % (lab.get(k, k), f) + " | ".join(cells)
                     + " |")
        L.append("")
    if ov.get("pipe") or sat:
        pipe = ov.get("pipe", {})
        L.append("### Lost events and bytes per event\n")
        L.append("Pipe: the %d pipe runs above (one CPU switching, "
                 "%s switches/s untraced). Saturation: a pipe pair pinned "
                 "to each CPU for %.0f s (%s switches/s untraced), tracer "
                 "on CPU 1, default buffer sizes.\n" % (
                     RUNS, fmt_n(pipe.get("untraced", {}).get(
                         "switch_rate")), SAT_SECONDS,
                     fmt_n(sat.get("untraced", {}).get("switch_rate"))))
        L.append("| tracer | pipe: events | pipe: lost | saturation: "
                 "switches/s | saturation: events | saturation: lost "
                 "(per CPU) | bytes/event |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        for t in tracers:
            p = pipe.get(t.key, {}).get("tracer", {})
            s = sat.get(t.key, {})
            st = s.get("tracer", {})
            if not p and not s:
                continue
            bpe = "%.1f" % (p["bytes"] / p["events"]) if p.get("bytes") \
                and p.get("events") else "-"
            lost_s = fmt_n(st.get("lost"))
            if st.get("lost") and st.get("lost_per_cpu"):
                lost_s += " (%s)" % ", ".join(fmt_n(x) for x in
                                              st["lost_per_cpu"])
            if st.get("lost") and st.get("events"):
                lost_s += ", %.1f%%" % (100.0 * st["lost"] /
                                        (st["lost"] + st["events"]))
            L.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                t.label, fmt_n(p.get("events")), fmt_n(p.get("lost")),
                fmt_n(s.get("switch_rate")), fmt_n(st.get("events")),
                lost_s, bpe))
        L.append("")
    bc = RESULTS.get("bpfcost", {})
    if bc:
        L.append("### In-kernel BPF time (kernel.bpf_stats_enabled, pipe "
                 "runs of %d round trips, %d interleaved rounds, the "
                 "median round shown)\n" % (PIPE_LOOPS, BPFCOST_ROUNDS))
        L.append("| tracer | BPF ns per round trip (2 switches) | rounds "
                 "| programs (runs x ns/run) |")
        L.append("|---|---:|---|---|")
        for t in tracers:
            v = bc.get(t.key)
            if not v:
                continue
            L.append("| %s | %.0f | %s | %s |" % (
                t.label, v["ns_per_loop"], " ".join(
                    "%.0f" % x for x in v.get("rounds", [])), ", ".join(
                    "%s %s x %.0f" % (x["name"], fmt_n(x["runs"]),
                                      x["ns_per_run"])
                    for x in v["progs"] if x["runs"] >= PIPE_LOOPS / 10)))
        L.append("")
    an = RESULTS.get("analysis", {})
    if an:
        L.append("### Offline analysis (median of %d runs, both CPUs, "
                 "output to /dev/null)\n" % RUNS)
        g = RESULTS.get("analysis_cpu_gauge") or {}
        if g.get("before") and g.get("after"):
            L.append("Rounds of every analysis once, interleaved.  CPU "
                     "gauge (a fixed loop pinned to each CPU, seconds, "
                     "CPU 0, 1, ...): %s before, %s after; two CPUs can "
                     "at best add the second one's speed to the first's."
                     "\n" % (", ".join("%.3f" % x for x in g["before"]),
                             ", ".join("%.3f" % x for x in g["after"])))
        L.append("| analysis | events in file | sched_switch in file | time "
                 "| events/s | sched_switch/s |")
        L.append("|---|---:|---:|---:|---:|---:|")
        for name, r in an.items():
            L.append("| %s | %s | %s | %.3f s | %s | %s |" % (
                name, fmt_n(r["events"]), fmt_n(r["switches"]), r["s"],
                fmt_n(r["events_per_s"]), fmt_n(r["switches_per_s"])))
        L.append("")
    rss = RESULTS.get("rss", {})
    if rss:
        L.append("### Peak RSS of system-wide captures\n")
        L.append("Fork load: bench/mixed in a loop (about 120 new tasks/s). "
                 "Steady load: one pipe pair on CPU 0, no new tasks. "
                 "Growth: RSS slope from a third of the run to its end.\n")
        L.append("| command | fork load: peak RSS, %d s | peak RSS, %d s | "
                 "RSS %d s -> %d s | growth | steady load: peak RSS, %d s "
                 "| RSS %d s -> %d s | growth |" % (
                     RSS_SHORT, RSS_LONG, RSS_LONG // 3, RSS_LONG,
                     RSS_LONG, RSS_LONG // 3, RSS_LONG))
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, r in rss.items():
            lg = r.get(str(RSS_LONG), {})
            st = r.get("steady-%d" % RSS_LONG, {})
            L.append("| %s | %s KiB | %s KiB | %s -> %s KiB | %s KiB/min "
                     "| %s KiB | %s -> %s KiB | %s KiB/min |" % (
                         name,
                         fmt_n(r.get(str(RSS_SHORT), {}).get("max_rss_kb")),
                         fmt_n(lg.get("max_rss_kb")),
                         fmt_n(lg.get("rss_from_kb")),
                         fmt_n(lg.get("rss_to_kb")),
                         fmt_n(lg.get("growth_kb_per_min")),
                         fmt_n(st.get("max_rss_kb")),
                         fmt_n(st.get("rss_from_kb")),
                         fmt_n(st.get("rss_to_kb")),
                         fmt_n(st.get("growth_kb_per_min"))))
        L.append("")
    if RESULTS["targets"]:
        L.append("### Targets\n")
        L.append("| target | result | measured |")
        L.append("|---|---|---|")
        for t in RESULTS["targets"]:
            L.append("| %s | %s | %s |" % (t["target"], t["state"],
                                           t["detail"]))
        L.append("")
    if RESULTS["skipped"]:
        L.append("### Skipped\n")
        for s in RESULTS["skipped"]:
            L.append("- %s: %s" % (s["what"], s["reason"]))
        L.append("")
    return "\n".join(L)


def environment():
    def first(argv):
        p = run(argv, timeout=20)
        return (p.stdout or p.stderr).strip().splitlines()[0] \
            if (p.stdout or p.stderr).strip() else "?"
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with open("/proc/meminfo") as f:
        mem = "%.1f GiB" % (int(f.readline().split()[1]) / 1048576)
    src = os.path.dirname(os.path.abspath(__file__))
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "kernel": os.uname().release, "cpu": cpu,
        "cpus": os.cpu_count(), "memory": mem,
        "ctxmon": first([CTXMON, "--version"]),
        "commit": first(["git", "-C", src, "describe", "--always",
                         "--dirty"]),
        "perf": first(["perf", "--version"]),
        "bpftrace": first(["bpftrace", "--version"]),
        "trace-cmd": first(["trace-cmd", "--version"]),
        "quick": QUICK, "runs": RUNS,
    }


def wait_quiet():
    if QUIET_WAIT <= 0:
        return
    t0 = time.monotonic()
    while float(loadavg()[0]) >= QUIET_LOAD and \
            time.monotonic() - t0 < QUIET_WAIT:
        log("  waiting for a quiet machine: load %s" % " ".join(loadavg()))
        time.sleep(60)


def main():
    global TMP
    os.makedirs(OUT, exist_ok=True)
    TMP = tempfile.mkdtemp(prefix="tmp.", dir=OUT)
    t_start = time.monotonic()
    wait_quiet()
    env = environment()
    env["load_before"] = " ".join(loadavg())
    RESULTS["environment"] = env
    log("ctxmon benchmarks: %s, %s, %s CPUs, kernel %s, load %s%s" % (
        env["date"], env["ctxmon"], env["cpus"], env["kernel"],
        env["load_before"], ", QUICK" if QUICK else ""))
    tracers, default_backend = discover_tracers()
    RESULTS["default_backend"] = default_backend
    RESULTS["tracers"] = [{"key": t.key, "label": t.label,
                           "default_record": isinstance(t, CtxmonRecord) and
                           ("(default)" in t.label or
                            t.key == "ctxmon-record")} for t in tracers]
    wls = workloads()
    try:
        if "overhead" in ONLY or "loss" in ONLY:
            overhead_section(wls if "overhead" in ONLY else
                             [w for w in wls if w.key == "pipe"], tracers)
        if "loss" in ONLY or "saturation" in ONLY:
            saturation_section(tracers)
        if "bpfcost" in ONLY:
            bpfcost_section(tracers)
        if "analysis" in ONLY:
            analysis_section(tracers)
        if "rss" in ONLY:
            rss_section()
    finally:
        kill_live()
        env["load_after"] = " ".join(loadavg())
        env["duration_s"] = round(time.monotonic() - t_start)
        if not KEEP:
            shutil.rmtree(TMP, ignore_errors=True)
    finish(os.path.join(OUT, "results"))


class Row:
    def __init__(self, d):
        self.__dict__.update(d)


def finish(base):
    """Targets and tables from RESULTS; prints them and writes base.json
    and base.md."""
    env = RESULTS["environment"]
    tracers = [Row(t) for t in RESULTS["tracers"]]
    RESULTS["targets"] = []
    evaluate(tracers, RESULTS["default_backend"])
    md = tables(tracers)
    log("\n" + md)
    log("load before %s, after %s; %d s" % (env["load_before"],
                                            env["load_after"],
                                            env["duration_s"]))
    with open(base + ".json", "w") as f:
        json.dump(RESULTS, f, indent=1, default=str)
    with open(base + ".md", "w") as f:
        f.write("Run: %s, %s (%s), kernel %s, %s, %s CPUs, %s; load "
                "before %s, after %s; %d s.\n\n" % (
                    env["date"], env["ctxmon"], env["commit"],
                    env["kernel"], env["cpu"], env["cpus"], env["memory"],
                    env["load_before"], env["load_after"],
                    env["duration_s"]))
        f.write(md)
    log("results: %s.md, %s.json" % (base, base))


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    if len(sys.argv) > 2 and sys.argv[1] == "--render":
        # Targets and tables again from a results.json (to results2.*).
        RESULTS.update(json.load(open(sys.argv[2])))
        durs = sorted(int(k) for r in RESULTS.get("rss", {}).values()
                      for k in r if k.isdigit())
        if durs:
            RSS_SHORT, RSS_LONG = durs[0], durs[-1]
        RUNS = RESULTS["environment"]["runs"]
        finish(sys.argv[2].rsplit(".", 1)[0] + "2")
    else:
        main()
