#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The harness of `make bench`: Valor's cost, measured against native
code, the instrumentation floor and gcc's ThreadSanitizer in one run.

Each workload (tools/bench/workloads/NAME.c) is built six ways --
native, floor, libtsan, valor (run as three variants: analysis=valor,
fastrcd, fasttrack), and with clang native-clang and valor-pass (Valor's
own LLVM pass, run as valor-pass, fastrcd-pass, fasttrack-pass) -- and
the ten variants are run alternately (A B C ..., A B C ..., ...) so that
a slow spell of the machine hits all of them alike.  Each run is timed
with time.monotonic() around posix_spawn/wait4 and its peak RSS read
from wait4's rusage; every run must exit 0 and print its `check=ok`
line.  Medians per variant, ratios to native, to the floor, to libtsan
(and of the pass to native clang), geometric means over the workloads;
then thread scaling and memory-size scaling for Valor.  Output: a table
on stdout, OUT/results.json, OUT/results.png (gnuplot), OUT/results.txt.

tools/bench/README.md describes what is measured and the JSON schema.
Python 3 standard library only.
"""

import argparse
import concurrent.futures
import datetime
import glob
import json
import math
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCHEMA = "valor-bench/1"

VARIANTS = ("native", "floor", "libtsan", "valor", "fastrcd", "fasttrack",
            "native-clang", "valor-pass", "fastrcd-pass", "fasttrack-pass")
ANALYSES = ("valor", "fastrcd", "fasttrack")
# The analyses of the binary built with Valor's LLVM pass.
PASS_VARIANTS = ("valor-pass", "fastrcd-pass", "fasttrack-pass")
# The variants built with clang whatever --cc is: skipped without it.
CLANG_VARIANTS = ("native-clang",) + PASS_VARIANTS
CLANG = "clang"
# The variants that get ratios and geometric means (native is the base).
RATIO_VARIANTS = VARIANTS[1:]
# The binary each variant runs: the three analyses of each share one.
BINARY_OF = {"native": "native", "floor": "floor", "libtsan": "libtsan",
             "valor": "valor", "fastrcd": "valor", "fasttrack": "valor",
             "native-clang": "native-clang", "valor-pass": "valor-pass",
             "fastrcd-pass": "valor-pass", "fasttrack-pass": "valor-pass"}
# The VALOR_OPTIONS=analysis= of each variant that runs a Valor binary.
ANALYSIS_OF = dict([(a, a) for a in ANALYSES] +
                   [(a + "-pass", a) for a in ANALYSES])
# valor's and libtsan's exit status for "conflicts / races reported".
EXIT_CONFLICTS = 66

# What each mode runs.  Thread scaling runs at scaling_size; the size
# scaling at the main size / max(factors) times each factor, so that its
# largest point is the main size itself.
PROFILES = {
    "full": dict(rounds=5, warmup=1, size=1.0,
                 scaling_threads=[1, 2, 4, 8], scaling_size=0.25,
                 scaling_factors=[1, 4, 16], scaling_rounds=3),
    "quick": dict(rounds=1, warmup=0, size=0.1,
                  scaling_threads=[1, 2, 4, 8], scaling_size=0.05,
                  scaling_factors=[1, 4, 16], scaling_rounds=1),
    "smoke": dict(rounds=1, warmup=0, size=0.01,
                  scaling_threads=[1, 2], scaling_size=0.01,
                  scaling_factors=[1, 4], scaling_rounds=1),
}

# The targets (geometric means unless per workload).
TARGETS = [
    ("valor_vs_floor", 1.3), ("valor_vs_libtsan", 0.33),
    ("fastrcd_vs_libtsan", 0.5), ("fasttrack_vs_libtsan", 0.75),
    ("valor_rss_vs_native", 1.5),
]
# Per workload: (variant, ratio, limit).
WORKLOAD_TARGETS = [("valor", "vs_libtsan", 1.0), ("valor", "vs_floor", 2.0)]
# Valor with the pass: <= 2.0x native wall time and <= 0.2x libtsan
# (geometric means); no workload above 4x native; peak memory <= 1.5x
# native.  Native is gcc's build, as everywhere.
PASS_TARGETS = [
    ("valor-pass_vs_native", 2.0), ("valor-pass_vs_libtsan", 0.2),
    ("valor-pass_rss_vs_native", 1.5),
]
PASS_WORKLOAD_TARGETS = [("valor-pass", "vs_native", 4.0)]
# What each set of targets is, for the report and targets[].of.
TARGET_SETS = [("issue 5", TARGETS, WORKLOAD_TARGETS),
               ("the pass", PASS_TARGETS, PASS_WORKLOAD_TARGETS)]


class BenchError(Exception):
    """A setup problem that stops the whole run (exit 1)."""


def log(msg=""):
    print(msg, file=sys.stderr, flush=True)


# ---- the machine ----------------------------------------------------------

def command_output(argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True,
                              check=False).stdout.strip()
    except OSError:
        return ""


def machine_info(cc, clang=False):
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    head = command_output(["git", "-C", ROOT, "rev-parse", "HEAD"])
    dirty = command_output(["git", "-C", ROOT, "status", "--porcelain",
                            "--untracked-files=no"])
    info = {
        "nproc": usable,
        "cpu_model": model,
        "kernel": os.uname().release,
        "compiler": command_output([cc, "--version"]).split("\n")[0],
        "python": sys.version.split()[0],
        "git_commit": head + ("-dirty" if head and dirty else ""),
    }
    if clang:
        info["clang"] = command_output([CLANG, "--version"]).split("\n")[0]
    return info


# ---- building -------------------------------------------------------------

class Paths:
    def __init__(self, args):
        self.build = os.path.join(ROOT, "build")
        self.valor = os.path.join(self.build, "bin", "valor")
        self.runtime = os.path.join(self.build, "lib", "libvalor-rt.a")
        self.plugin = os.path.join(self.build, "lib", "valor-pass.so")
        self.floor_lib = os.path.join(self.build, "bench", "lib",
                                      "libvalor-floor.a")
        self.spawn = os.path.join(self.build, "bench", "lib", "bench-spawn")
        self.bin = os.path.abspath(args.bin_dir)
        self.out = os.path.abspath(args.out)


def build_commands(paths, cc, src, name):
    """{binary variant: (output, [commands], [extra inputs])}.

    The floor is compiled by `valor cc -c` itself, so it has exactly the
    flags valor cc adds (check_floor_flags() verifies that the one-step
    build of the valor variant gives the compiler proper the same ones),
    then linked by the plain compiler, statically, with the floor archive.
    native-clang and valor-pass are built with clang whatever @cc is:
    valor cc --compiler=clang instruments with Valor's own pass.
    """
    common = ["-O2", "-pthread"]
    vcc = [paths.valor, "cc", "--compiler=" + cc]
    out = {b: os.path.join(paths.bin, b, name)
           for b in ("native", "floor", "libtsan", "valor", "native-clang",
                     "valor-pass")}
    obj = os.path.join(paths.bin, "floor", name + ".o")
    return {
        "native": (out["native"],
                   [[cc] + common + ["-o", "@OUT@", src, "-lm"]], []),
        "floor": (out["floor"],
                  [vcc + common + ["-c", "-o", obj, src],
                   [cc] + common + ["-o", "@OUT@", obj, paths.floor_lib,
                                    "-lm"]],
                  [paths.valor, paths.floor_lib]),
        "libtsan": (out["libtsan"],
                    [[cc] + common + ["-fsanitize=thread", "-o", "@OUT@",
                                      src, "-lm"]], []),
        "valor": (out["valor"],
                  [vcc + common + ["-o", "@OUT@", src, "-lm"]],
                  [paths.valor, paths.runtime]),
        "native-clang": (out["native-clang"],
                         [[CLANG] + common + ["-o", "@OUT@", src, "-lm"]],
                         []),
        "valor-pass": (out["valor-pass"],
                       [[paths.valor, "cc", "--compiler=" + CLANG] + common +
                        ["-o", "@OUT@", src, "-lm"]],
                       [paths.valor, paths.runtime, paths.plugin]),
    }


def up_to_date(output, stamp_text, inputs):
    try:
        with open(output + ".cmd") as f:
            if f.read() != stamp_text:
                return False
        t = os.stat(output).st_mtime
    except OSError:
        return False
    return all(os.stat(i).st_mtime <= t for i in inputs if os.path.exists(i))


def build_one(output, commands, inputs):
    """Build @output (atomically: a temporary name, then rename).
    Returns None or an error message."""
    stamp = "\n".join(shlex.join(c) for c in commands) + "\n"
    if up_to_date(output, stamp, inputs):
        return None
    os.makedirs(os.path.dirname(output), exist_ok=True)
    tmp = "%s.tmp%d" % (output, os.getpid())
    for cmd in commands:
        cmd = [tmp if a == "@OUT@" else a for a in cmd]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if r.returncode != 0:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return "%s\n  exit %d: %s" % (shlex.join(cmd), r.returncode,
                                          (r.stderr or r.stdout).strip()[-2000:])
    os.replace(tmp, output)
    with open(output + ".cmd", "w") as f:
        f.write(stamp)
    return None


def build_all(paths, cc, workloads, binaries, jobs):
    """Build what is needed; {(workload, binary): error} for failures."""
    tasks = {}
    for name, src in workloads.items():
        for b, (output, commands, inputs) in build_commands(
                paths, cc, src, name).items():
            if b in binaries:
                # The workloads' shared header is a source of each.
                shared = os.path.join(os.path.dirname(src), "workload.h")
                tasks[(name, b)] = (output, commands,
                                    inputs + [src, shared])
    errors = {}
    log("building %d binaries (%d workloads x %s) into %s"
        % (len(tasks), len(workloads), ",".join(sorted(binaries)),
           os.path.relpath(paths.bin)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        futures = {ex.submit(build_one, *t): k for k, t in tasks.items()}
        for fut in concurrent.futures.as_completed(futures):
            err = fut.result()
            if err:
                errors[futures[fut]] = err
    return errors


def cc1_options(argv, src):
    """The options the compiler proper gets from @argv (run with -###),
    without the source, output and dump file names, sorted."""
    r = subprocess.run(argv + ["-###"], capture_output=True, text=True,
                       check=False)
    for line in r.stderr.splitlines():
        words = shlex.split(line)
        if not words:
            continue
        is_gcc = os.path.basename(words[0]) in ("cc1", "cc1plus")
        if is_gcc or (len(words) > 1 and words[1] == "-cc1"):
            break
    else:
        raise BenchError("no compiler-proper command in the -### output of "
                         + shlex.join(argv) + ":\n" + r.stderr[-2000:])
    drop_with_value = {"-o", "-dumpdir", "-dumpbase", "-dumpbase-ext",
                       "-main-file-name", "-aux-info", "-MF", "-MT", "-MQ",
                       "-fcoverage-compilation-dir", "-fdebug-compilation-dir"}
    opts, i, words = [], 1, [w for w in words if w != src]
    while i < len(words):
        w = words[i]
        value = (words[i + 1] if i + 1 < len(words)
                 and not words[i + 1].startswith("-") else None)
        i += 1 if value is None else 2
        if w in drop_with_value or w.startswith("-fdebug-compilation-dir="):
            continue
        if w.startswith("-"):
            opts.append(w if value is None else w + " " + value)
    return sorted(opts)


def check_floor_flags(paths, cc, src):
    """The floor's compile step and the valor variant's one-step build
    must give the compiler proper the same options."""
    with tempfile.TemporaryDirectory() as tmp:
        vcc = [paths.valor, "cc", "--compiler=" + cc, "-O2", "-pthread"]
        floor = cc1_options(vcc + ["-c", "-o", os.path.join(tmp, "x.o"),
                                   src], src)
        valor = cc1_options(vcc + ["-o", os.path.join(tmp, "x"), src, "-lm"],
                            src)
    if floor != valor:
        raise BenchError(
            "the floor would not be compiled like the valor variant:\n"
            "  valor cc -c:      %s\n  valor cc (link): %s"
            % (" ".join(floor), " ".join(valor)))
    return floor


def clang_skips(paths, wanted, src):
    """{variant: why} for the variants of @wanted built with clang that
    cannot be: no clang, no pass plugin, or a clang the plugin does not
    load into (valor cc would fall back to -fsanitize=thread, and the
    -pass variants would not measure the pass)."""
    clang_vs = [v for v in CLANG_VARIANTS if v in wanted]
    pass_vs = [v for v in PASS_VARIANTS if v in wanted]
    if not clang_vs:
        return {}
    if not shutil.which(CLANG):
        return {v: "%s is not installed (Debian: clang-14; make deps)"
                % CLANG for v in clang_vs}
    why = None
    if pass_vs and not os.path.exists(paths.plugin):
        why = ("%s is missing (make all builds it, with llvm-14-dev)"
               % os.path.relpath(paths.plugin, ROOT))
    elif pass_vs and os.path.exists(paths.valor):
        # valor cc gives clang the plugin only if it loads into it.
        with tempfile.TemporaryDirectory() as tmp:
            argv = [paths.valor, "cc", "--compiler=" + CLANG, "-O2",
                    "-pthread", "-c", "-o", os.path.join(tmp, "x.o"), src,
                    "-###"]
            r = subprocess.run(argv, capture_output=True, text=True,
                               check=False)
        if "-fpass-plugin=" not in r.stderr:
            note = next((l for l in r.stderr.splitlines()
                         if l.startswith("valor cc")), r.stderr.strip()[-500:])
            why = "valor cc --compiler=%s does not load the pass: %s" % (
                CLANG, note)
    return {v: why for v in pass_vs if why}


# ---- running --------------------------------------------------------------

class Run:
    __slots__ = ("wall_s", "rss_kb", "error", "result")

    def __init__(self, wall_s=0.0, rss_kb=0, error=None, result=None):
        self.wall_s, self.rss_kb = wall_s, rss_kb
        self.error, self.result = error, result


def tail(text, lines=15):
    text = text.rstrip()
    return "\n".join("    | " + l for l in text.splitlines()[-lines:])


def run_program(spawn, argv, env, variant, timeout):
    """One timed run through bench-spawn (tools/bench/spawn.c: it times
    the program with CLOCK_MONOTONIC around posix_spawn + wait4 and
    reads wait4's ru_maxrss, from a process small enough not to lend the
    program its own peak RSS).  Run.error says what went wrong."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        rfd, wfd = os.pipe()
        actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                   (os.POSIX_SPAWN_DUP2, err.fileno(), 2),
                   (os.POSIX_SPAWN_DUP2, wfd, 3)]
        try:
            pid = os.posix_spawn(spawn, [spawn, str(timeout)] + argv, env,
                                 file_actions=actions)
        finally:
            os.close(wfd)
        with os.fdopen(rfd) as r:
            line = r.read()
        _, spawn_status = os.waitpid(pid, 0)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    rep = dict(kv.split("=", 1) for kv in line.split())
    cmd = shlex.join(argv)
    if variant in ANALYSIS_OF:
        cmd = "VALOR_OPTIONS=" + env["VALOR_OPTIONS"] + " " + cmd
    if os.waitstatus_to_exitcode(spawn_status) != 0 or "status" not in rep:
        return Run(error="%s: could not be run (%s exit %d):\n%s"
                   % (cmd, spawn, os.waitstatus_to_exitcode(spawn_status),
                      tail(stderr)))
    status = int(rep["status"])
    run = Run(int(rep["wall_ns"]) / 1e9, int(rep["maxrss_kb"]))
    if rep["timed_out"] == "1":
        run.error = "%s: killed after %d s (--timeout)" % (cmd, timeout)
        return run
    code = os.waitstatus_to_exitcode(status)
    if code == EXIT_CONFLICTS and variant in ANALYSIS_OF:
        run.error = ("%s: exit %d: VALOR REPORTED CONFLICTS on a workload "
                     "meant to be race-free -- a false report, or a race in "
                     "the workload:\n%s" % (cmd, code, tail(stderr, 40)))
    elif code == EXIT_CONFLICTS and variant == "libtsan":
        run.error = ("%s: exit %d: ThreadSanitizer reported races on a "
                     "workload meant to be race-free:\n%s"
                     % (cmd, code, tail(stderr, 40)))
    elif code < 0:
        run.error = "%s: killed by signal %d\n%s" % (cmd, -code, tail(stderr))
    elif code != 0:
        run.error = "%s: exit status %d\n%s" % (cmd, code,
                                                tail(stderr + stdout))
    else:
        line = next((l for l in stdout.splitlines()
                     if re.search(r"(^|\s)check=ok(\s|$)", l)), None)
        if line is None:
            run.error = ("%s: exit 0 but no 'check=ok' line on stdout:\n%s"
                         % (cmd, tail(stdout + stderr)))
        else:
            m = re.search(r"\bresult=(\S+)", line)
            run.result = m.group(1) if m else line.strip()
    return run


class Runner:
    def __init__(self, args, paths, workloads):
        self.args, self.paths, self.workloads = args, paths, workloads
        base = {k: v for k, v in os.environ.items() if k != "VALOR_OPTIONS"}
        self.env = {v: dict(base) for v in VARIANTS}
        for v, a in ANALYSIS_OF.items():
            self.env[v]["VALOR_OPTIONS"] = "analysis=" + a
        self.tty = sys.stderr.isatty()
        self.failures = []  # (workload, variant, message)

    def binary(self, name, variant):
        return os.path.join(self.paths.bin, BINARY_OF[variant], name)

    def progress(self, text, done=False):
        if self.tty:
            sys.stderr.write("\r\033[K" + text + ("\n" if done else ""))
            sys.stderr.flush()
        elif done:
            log(text)

    def measure(self, name, variants, threads, size, rounds, warmup, what):
        """Run @variants alternately; {variant: [Run]} of the measured
        rounds and {variant: error} of those that failed (not run again)."""
        samples = {v: [] for v in variants}
        errors = {}
        total = warmup + rounds
        for r in range(total):
            label = "warm-up" if r < warmup else "round %d/%d" % (
                r - warmup + 1, rounds)
            done = []
            for v in variants:
                if v in errors:
                    continue
                argv = [self.binary(name, v), "-t", str(threads),
                        "-s", fmt_size(size)]
                self.progress("%s %s %s: %s ..." % (what, name, label, v))
                run = run_program(self.paths.spawn, argv, self.env[v], v,
                                  self.args.timeout)
                if run.error:
                    errors[v] = run.error
                    self.failures.append((name, v, run.error))
                    self.progress("", done=False)
                    log("\nFAILED: %s [%s]: %s\n" % (name, v, run.error))
                    continue
                done.append("%s %.2fs" % (v, run.wall_s))
                if r >= warmup:
                    samples[v].append(run)
            self.progress("%s %s %s: %s" % (what, name, label,
                                            ", ".join(done)), done=True)
        return samples, errors


def fmt_size(s):
    return ("%.6f" % s).rstrip("0").rstrip(".")


def median_stats(runs):
    return {
        "wall_s": round(statistics.median(r.wall_s for r in runs), 6),
        "rss_kb": int(statistics.median(r.rss_kb for r in runs)),
        "runs_wall_s": [round(r.wall_s, 6) for r in runs],
        "runs_rss_kb": [r.rss_kb for r in runs],
    }


def ratio(a, b):
    return round(a / b, 4) if a and b else None


def geomean(values):
    values = [v for v in values if v]
    if not values:
        return None
    return round(math.exp(sum(math.log(v) for v in values) / len(values)), 4)


# ---- the main measurement -------------------------------------------------

def bench_workload(runner, name, variants, cfg):
    samples, errors = runner.measure(name, variants, cfg["threads"],
                                     cfg["size"], cfg["rounds"],
                                     cfg["warmup"], "bench")
    entry = {"status": "ok" if not errors else "failed",
             "errors": {v: e for v, e in errors.items()},
             "variants": {}}
    for v in variants:
        if samples[v]:
            st = median_stats(samples[v])
            st["result"] = samples[v][-1].result
            entry["variants"][v] = st
    got = entry["variants"]
    for v, st in got.items():
        for base in ("native", "floor", "libtsan"):
            if base in got:
                st["vs_" + base] = ratio(st["wall_s"], got[base]["wall_s"])
        if v in PASS_VARIANTS and "native-clang" in got:
            st["vs_native_clang"] = ratio(st["wall_s"],
                                          got["native-clang"]["wall_s"])
        if "native" in got:
            st["rss_vs_native"] = ratio(st["rss_kb"], got["native"]["rss_kb"])
    results = {got[v]["result"] for v in got if got[v].get("result")}
    if len(results) > 1:
        entry["results_differ"] = sorted(results)
    if "floor" in got and got["floor"].get("vs_native"):
        entry["floor_high"] = got["floor"]["vs_native"] > cfg["floor_flag"]
    return entry


def ratio_fields(v):
    """The ratio fields of variant @v and the variant each is over."""
    fields = [("vs_native", "native"), ("vs_floor", "floor"),
              ("vs_libtsan", "libtsan"), ("rss_vs_native", "native")]
    if v in PASS_VARIANTS:
        fields.append(("vs_native_clang", "native-clang"))
    return fields


def compute_geomeans(workloads, variants):
    ok = [w for w in workloads.values() if w["status"] == "ok"]
    g = {}
    for v in RATIO_VARIANTS:
        if v not in variants:
            continue
        for field, _ in ratio_fields(v):
            val = geomean([w["variants"][v].get(field) for w in ok])
            if val is not None:
                g[v + "_" + field] = val
    return g


def check_targets(workloads, gm):
    out = []
    for of, targets, per_workload in TARGET_SETS:
        for key, limit in targets:
            if key in gm:
                out.append({"what": "geomean " + key, "of": of,
                            "limit": limit, "value": gm[key],
                            "met": gm[key] <= limit})
        for name, w in workloads.items():
            for variant, key, limit in per_workload:
                v = w["variants"].get(variant, {})
                if w["status"] != "ok" or not v.get(key):
                    continue
                out.append({"what": "%s %s_%s" % (name, variant, key),
                            "of": of, "limit": limit, "value": v[key],
                            "met": v[key] <= limit})
    return out


# ---- scaling --------------------------------------------------------------

def scaling_run(runner, names, variants, points, kind, cfg):
    """points: [(label value, threads, size)]."""
    rows = []
    for name in names:
        for value, threads, size in points:
            samples, errors = runner.measure(
                name, variants, threads, size, cfg["scaling_rounds"], 0,
                "%s-scaling %s" % (kind, ("%d threads" % value) if
                                   kind == "threads" else "x%d" % value))
            row = {"workload": name, "threads": threads, "size": size,
                   "status": "ok" if not errors else "failed"}
            if kind == "size":
                row["factor"] = value
            for v in variants:
                if samples[v]:
                    st = median_stats(samples[v])
                    row[v] = {"wall_s": st["wall_s"], "rss_kb": st["rss_kb"]}
            if errors:
                row["errors"] = errors
            if "native" in row:
                for v in variants:
                    if v != "native" and v in row:
                        row[v + "_vs_native"] = ratio(
                            row[v]["wall_s"], row["native"]["wall_s"])
                        row[v + "_rss_vs_native"] = ratio(
                            row[v]["rss_kb"], row["native"]["rss_kb"])
            rows.append(row)
    summary = []
    for value, threads, size in points:
        s = {"threads": threads, "size": size}
        if kind == "size":
            s["factor"] = value
        sel = [r for r in rows if r["status"] == "ok"
               and r["threads"] == threads and r["size"] == size]
        for v in variants:
            if v == "native":
                continue
            for k in (v + "_vs_native", v + "_rss_vs_native"):
                val = geomean([r.get(k) for r in sel])
                if val is not None:
                    s[k] = val
        summary.append(s)
    return {"variants": list(variants), "rounds": cfg["scaling_rounds"],
            "points": rows, "geomean": summary}


# ---- output ---------------------------------------------------------------

def fmt_s(x):
    if x is None:
        return "-"
    return "%.3f" % x if x < 10 else "%.1f" % x


def fmt_x(x):
    if x is None:
        return "-"
    return "%.2fx" % x if x < 100 else "%.0fx" % x


def fmt_mb(kb):
    return "-" if kb is None else "%.1f" % (kb / 1024.0)


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows)
              for i in range(len(header))]
    lines = []
    for j, r in enumerate([header] + rows):
        cells = [str(c).ljust(widths[0]) if i == 0 else str(c).rjust(widths[i])
                 for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
        if j == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def report(res):
    cfg, wls, variants = res["config"], res["workloads"], res["config"]["variants"]
    gm = res["geomean"]
    out = []
    m = res["machine"]
    out.append("Valor benchmark, %s: %s, %d CPUs, Linux %s, %s%s"
               % (res["date"], m["cpu_model"], m["nproc"], m["kernel"],
                  m["compiler"], ", " + m["clang"] if m.get("clang") else ""))
    out.append("%d threads, size %s, median of %d round(s)%s; ratios are of "
               "medians" % (cfg["threads"], fmt_size(cfg["size"]),
                            cfg["rounds"], " after %d warm-up" % cfg["warmup"]
                            if cfg["warmup"] else ""))
    skipped = cfg.get("skipped", {})
    for why in dict.fromkeys(skipped.values()):
        out.append("SKIPPED %s: %s" % (", ".join(
            v for v in skipped if skipped[v] == why), why))
    out.append("")

    def cell(w, v, field):
        st = wls[w]["variants"].get(v)
        return st.get(field) if st else None

    names = list(wls)

    # The gcc variants, then those built with clang, each group with the
    # base (gcc's native) first: one table of ten columns is too wide.
    groups = [[v for v in variants if v not in CLANG_VARIANTS],
              [v for v in variants if v == "native" or v in CLANG_VARIANTS]]
    groups = [g for g in groups if [v for v in g if v != "native"]] or \
        [variants]

    def per_variant(title, key, ratio, fmt, gm_key, mark_failed=False):
        """A value and its ratio to native, per workload and variant."""
        for vs in groups:
            out.append(title if vs[-1] not in CLANG_VARIANTS else
                       title + ", built with clang (native is still gcc's)")
            per_variant_table(vs, key, ratio, fmt, gm_key, mark_failed)

    def per_variant_table(variants, key, ratio, fmt, gm_key, mark_failed):
        rows = []
        for w in names:
            failed = mark_failed and wls[w]["status"] != "ok"
            row = [w + (" (FAILED)" if failed else "")]
            for v in variants:
                x = cell(w, v, key)
                row.append("-" if x is None else (fmt(x) if v == "native" else
                                                  "%s (%s)" % (fmt(x), fmt_x(
                                                      cell(w, v, ratio)))))
            rows.append(row)
        rows.append(["geomean"] + ["" if v == "native" else
                                   fmt_x(gm.get(gm_key % v))
                                   for v in variants])
        out.append(table(["workload"] + list(variants), rows))
        out.append("")

    per_variant("Wall time, seconds (x native)", "wall_s", "vs_native",
                fmt_s, "%s_vs_native", mark_failed=True)

    an = [v for v in ANALYSES if v in variants]
    cols = [(v, b) for v in an for b in ("floor", "libtsan") if b in variants]
    if cols:
        out.append("The analyses against the floor and against libtsan "
                   "(wall time ratio)")
        rows = []
        for w in names:
            rows.append([w] + [fmt_x(cell(w, v, "vs_" + b)) for v, b in cols])
        rows.append(["geomean"] + [fmt_x(gm.get("%s_vs_%s" % (v, b)))
                                   for v, b in cols])
        out.append(table(["workload"] + ["%s/%s" % c for c in cols], rows))
        out.append("")

    pv = [v for v in PASS_VARIANTS if v in variants]
    bases = [(b, f) for b, f in (("native-clang", "vs_native_clang"),
                                 ("libtsan", "vs_libtsan"),
                                 ("floor", "vs_floor")) if b in variants]
    if pv and bases:
        out.append("The analyses with the pass against %s (wall time "
                   "ratios, in that order)" % ", ".join(b for b, _ in bases))
        rows = []
        for w in names:
            rows.append([w] + [" / ".join(fmt_x(cell(w, v, f))
                                          for _, f in bases) for v in pv])
        rows.append(["geomean"] + [" / ".join(fmt_x(gm.get(v + "_" + f))
                                              for _, f in bases)
                                   for v in pv])
        out.append(table(["workload"] + pv, rows))
        out.append("")

    per_variant("Peak RSS, MB (x native)", "rss_kb", "rss_vs_native",
                fmt_mb, "%s_rss_vs_native")

    if "floor" in variants:
        high = res["floor_high"]
        if high:
            out.append("Where the floor itself is high (the compiler's "
                       "instrumentation, floor > %gx native):"
                       % cfg["floor_flag"])
            for h in high:
                out.append("  %-20s floor %s native" % (h["workload"],
                                                        fmt_x(h["floor_vs_native"])))
        else:
            out.append("The floor is at most %gx native on every workload."
                       % cfg["floor_flag"])
        out.append("")

    for kind, title in (("threads", "Thread scaling"),
                        ("size", "Memory-size scaling")):
        sc = res["scaling"].get(kind)
        if not sc:
            continue
        vs = [v for v in sc["variants"] if v != "native"]
        pts = sc["geomean"]
        if kind == "threads":
            heads = ["%d thr" % p["threads"] for p in pts]
            out.append("%s (size %s, median of %d): %s, wall x native / "
                       "RSS MB (x native)" % (title, fmt_size(pts[0]["size"]),
                                              sc["rounds"], ",".join(vs)))
        else:
            heads = ["x%d (-s %s)" % (p["factor"], fmt_size(p["size"]))
                     for p in pts]
            out.append("%s (%d threads, median of %d): %s, wall x native / "
                       "RSS MB (x native)" % (title, pts[0]["threads"],
                                              sc["rounds"], ",".join(vs)))
        rows = []
        for v in vs:
            for w in dict.fromkeys(r["workload"] for r in sc["points"]):
                row = [w if len(vs) == 1 else "%s %s" % (w, v)]
                for p in pts:
                    r = next((r for r in sc["points"] if r["workload"] == w
                              and r["threads"] == p["threads"]
                              and r["size"] == p["size"]), None)
                    if not r or v not in r:
                        row.append("FAILED")
                        continue
                    row.append("%s %s (%s)" % (
                        fmt_x(r.get(v + "_vs_native")),
                        fmt_mb(r[v]["rss_kb"]),
                        fmt_x(r.get(v + "_rss_vs_native"))))
                rows.append(row)
            rows.append(["geomean" if len(vs) == 1 else "geomean " + v] +
                        ["%s / %s" % (fmt_x(p.get(v + "_vs_native")),
                                      fmt_x(p.get(v + "_rss_vs_native")))
                         for p in pts])
        out.append(table(["workload"] + heads, rows))
        out.append("")

    for of, _, _ in TARGET_SETS:
        targets = [t for t in res["targets"] if t.get("of", "issue 5") == of]
        if not targets:
            continue
        missed = [t for t in targets if not t["met"]]
        out.append("Targets of %s: %d of %d met"
                   % (of, len(targets) - len(missed), len(targets)))
        for t in targets:
            if t["what"].startswith("geomean") or not t["met"]:
                out.append("  %-6s %-40s %8s  (limit %s)"
                           % ("ok" if t["met"] else "MISSED", t["what"],
                              fmt_x(t["value"]), fmt_x(t["limit"])))
        out.append("")

    if res["failures"]:
        out.append("FAILURES (%d): these workloads are left out of the "
                   "geometric means" % len(res["failures"]))
        for f in res["failures"]:
            out.append("  %s [%s]: %s" % (f["workload"], f["variant"],
                                          f["error"].splitlines()[0]))
        out.append("")
    return "\n".join(out)


def plot(res, out_dir):
    """OUT/results.png; None, or why there is no plot."""
    gnuplot = shutil.which("gnuplot")
    variants = [v for v in RATIO_VARIANTS if v in res["config"]["variants"]]
    if not variants:
        return "no variant to plot but native"
    dat = os.path.join(out_dir, "results.dat")
    with open(dat, "w") as f:
        f.write("workload " + " ".join(variants) + "\n")
        for name, w in res["workloads"].items():
            vals = [w["variants"].get(v, {}).get("vs_native") for v in variants]
            f.write(name + " " + " ".join("NaN" if x is None else str(x)
                                          for x in vals) + "\n")
        f.write("geomean " + " ".join(
            str(res["geomean"].get(v + "_vs_native", "NaN"))
            for v in variants) + "\n")
    n = len(res["workloads"]) + 1
    png = os.path.join(out_dir, "results.png")
    cfg = res["config"]
    script = os.path.join(out_dir, "results.gp")
    with open(script, "w") as f:
        f.write("""# Generated by tools/bench/bench.py: gnuplot results.gp
set terminal pngcairo size %d,600 font "sans,10"
set output "%s"
set title "Slowdown vs native: median wall time, %d threads, size %s (%s)" noenhanced
set style data histogram
set style histogram cluster gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 2
set yrange [0.5:*]
set xrange [-0.6:%f]
set grid ytics
set ylabel "wall time / native (log scale)"
set xtics rotate by -30 noenhanced
set key outside top center horizontal noenhanced
set arrow from graph 0, first 1 to graph 1, first 1 nohead dashtype 2
# The default colours repeat after eight variants.
set linetype 9 linecolor rgb "#a0522d"
plot for [i=2:%d] "%s" using i:xtic(1) title columnheader(i)
""" % (max(900, (18 * len(variants) + 20) * n), png, cfg["threads"],
       fmt_size(cfg["size"]), res["date"][:10], n - 0.4,
       len(variants) + 1, dat))
    if not gnuplot:
        return ("gnuplot is not installed (Debian: gnuplot-nox; make deps): "
                "no %s; the data and script are in %s and %s"
                % (png, dat, script))
    r = subprocess.run([gnuplot, script], capture_output=True, text=True,
                       check=False)
    if r.returncode != 0 or not os.path.exists(png):
        return "gnuplot failed (exit %d): %s" % (r.returncode,
                                                  r.stderr.strip()[-1000:])
    return None


# ---- the JSON schema ------------------------------------------------------

def check_json(path, want_variants=None):
    """Validate a results.json; a list of problems (empty if fine)."""
    try:
        with open(path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        return ["%s: cannot read it as JSON: %s" % (path, e)]
    errs = []

    def pos(x):
        return (isinstance(x, (int, float)) and not isinstance(x, bool)
                and math.isfinite(x) and x > 0)

    for key in ("schema", "date", "machine", "config", "workloads",
                "geomean", "scaling", "floor_high", "failures"):
        if key not in res:
            errs.append("no top-level key '%s'" % key)
    if errs:
        return errs
    if res["schema"] != SCHEMA:
        errs.append("schema is %r, not %r" % (res["schema"], SCHEMA))
    for key in ("nproc", "cpu_model", "kernel", "compiler"):
        if not res["machine"].get(key):
            errs.append("machine.%s is missing or empty" % key)
    variants = want_variants or res["config"].get("variants") or []
    if not res["workloads"]:
        errs.append("no workloads")
    for name, w in res["workloads"].items():
        if w.get("status") != "ok":
            errs.append("workload %s: status %r: %s" % (
                name, w.get("status"), "; ".join(
                    e.splitlines()[0] for e in w.get("errors", {}).values())))
        for v in variants:
            st = w.get("variants", {}).get(v)
            if st is None:
                errs.append("workload %s: no variant %s" % (name, v))
                continue
            for key in ("wall_s", "rss_kb"):
                if not pos(st.get(key)):
                    errs.append("workload %s variant %s: %s is %r, not > 0"
                                % (name, v, key, st.get(key)))
            for key, base in ratio_fields(v):
                if base in variants and not pos(st.get(key)):
                    errs.append("workload %s variant %s: %s is %r"
                                % (name, v, key, st.get(key)))
    want = {"%s_%s" % (v, key) for v in RATIO_VARIANTS if v in variants
            for key, base in ratio_fields(v) if base in variants}
    have = set(res["geomean"])
    for k in sorted(want - have):
        errs.append("geomean.%s is missing" % k)
    for k in sorted(have - want):
        errs.append("geomean.%s is not a key of the schema" % k)
    for k in sorted(want & have):
        if not pos(res["geomean"][k]):
            errs.append("geomean.%s is %r, not > 0" % (k, res["geomean"][k]))
    for kind in res["scaling"]:
        if kind not in ("threads", "size"):
            errs.append("scaling.%s is not a kind of scaling" % kind)
            continue
        sc = res["scaling"][kind]
        if not sc.get("points"):
            errs.append("scaling.%s has no points" % kind)
        for r in sc.get("points", []):
            for v in sc.get("variants", []):
                if v not in r or not pos(r[v].get("wall_s")) or \
                        not pos(r[v].get("rss_kb")):
                    errs.append("scaling.%s: %s threads=%s size=%s: no "
                                "valid %s" % (kind, r.get("workload"),
                                              r.get("threads"), r.get("size"),
                                              v))
    return errs


# ---- main -----------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="bench.py",
        description="Build the benchmark workloads six ways and measure "
        "Valor (with gcc, and with clang and Valor's own pass) against "
        "native code, the instrumentation floor and gcc's "
        "ThreadSanitizer (make bench, make bench-quick).",
        epilog="Exit status: 0 all ran and checked; 1 a workload failed "
        "its check, a valor variant reported conflicts, a build failed or "
        "a variant is missing; 2 bad usage.  See tools/bench/README.md.")
    p.add_argument("--quick", action="store_true",
                   help="one round, no warm-up, size 0.1, one round per "
                   "scaling point (make bench-quick)")
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes (0.01), one round, reduced scaling: "
                   "checks the harness, measures nothing")
    p.add_argument("--rounds", type=int, help="measured rounds (default 5)")
    p.add_argument("--warmup", type=int,
                   help="warm-up rounds, not measured (default 1)")
    p.add_argument("--size", type=float, help="-s of every workload "
                   "(default 1.0)")
    p.add_argument("--threads", type=int, default=2,
                   help="-t of every workload (default 2)")
    p.add_argument("--workloads", help="comma-separated names (default: "
                   "every NAME.c of the workload directory)")
    p.add_argument("--variants", help="comma-separated, of "
                   + ",".join(VARIANTS) + " (default: all; those built "
                   "with clang are skipped if it is not installed)")
    p.add_argument("--workload-dir",
                   default=os.path.join(ROOT, "tools", "bench", "workloads"),
                   help="where NAME.c are (default tools/bench/workloads)")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "bench"),
                   help="where results.{json,png,txt} go (default build/bench)")
    p.add_argument("--bin-dir",
                   default=os.path.join(ROOT, "build", "bench", "bin"),
                   help="where the binaries are built, BIN/VARIANT/NAME "
                   "(default build/bench/bin)")
    p.add_argument("--no-build", action="store_true",
                   help="use the binaries already built")
    p.add_argument("--cc", default="gcc",
                   help="the compiler of every variant but native-clang "
                   "and the -pass ones, which are clang's (default gcc)")
    p.add_argument("--no-scaling", action="store_true",
                   help="skip the thread and memory-size scaling runs")
    p.add_argument("--scaling-threads",
                   help="thread counts of the thread-scaling run "
                   "(default 1,2,4,8)")
    p.add_argument("--scaling-size", type=float,
                   help="-s of the thread-scaling run (default 0.25; "
                   "--quick 0.05; --smoke 0.01; at most --size)")
    p.add_argument("--scaling-factors",
                   help="size factors of the size-scaling run (default "
                   "1,4,16: sizes SIZE/16, SIZE/4, SIZE)")
    p.add_argument("--scaling-rounds", type=int,
                   help="rounds per scaling point (default 3)")
    p.add_argument("--scaling-variants", default="native,valor",
                   help="variants of the scaling runs (default "
                   "native,valor; native is always included; e.g. "
                   "native,valor,valor-pass)")
    p.add_argument("--scaling-workloads",
                   help="workloads of the scaling runs (default: all)")
    p.add_argument("--floor-flag", type=float, default=3.0,
                   help="flag workloads whose floor is above this many "
                   "times native (default 3)")
    p.add_argument("--timeout", type=int, default=1800,
                   help="seconds one run may take (default 1800)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="parallel compilations (default nproc)")
    p.add_argument("--list", action="store_true",
                   help="list the workloads and exit")
    p.add_argument("--check-json", metavar="FILE",
                   help="validate FILE against the results schema (every "
                   "variant of config.variants, every geomean key); exit "
                   "1 with the problems if it does not hold")
    args = p.parse_args(argv)
    if args.quick and args.smoke:
        p.error("--quick and --smoke exclude each other")
    return p, args


def split_list(p, text, allowed=None, what="value", conv=str):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        p.error("empty %s list" % what)
    out = []
    for x in items:
        try:
            x = conv(x)
        except ValueError:
            p.error("bad %s: %r" % (what, x))
        if allowed is not None and x not in allowed:
            p.error("unknown %s %r (known: %s)" % (what, x,
                                                   ", ".join(allowed)))
        out.append(x)
    return out


def main(argv):
    p, args = parse_args(argv)
    if args.check_json:
        errs = check_json(args.check_json)
        for e in errs:
            print("check-json: " + e, file=sys.stderr)
        if errs:
            return 1
        with open(args.check_json) as f:
            res = json.load(f)
        print("check-json: %s: ok (%d workloads, variants %s, %d geomean "
              "keys)" % (args.check_json, len(res["workloads"]),
                         ",".join(res["config"]["variants"]),
                         len(res["geomean"])))
        return 0

    prof = dict(PROFILES["smoke" if args.smoke else
                         "quick" if args.quick else "full"])
    if args.size is not None and args.scaling_size is None:
        args.scaling_size = min(prof["scaling_size"], args.size)
    for key in ("rounds", "warmup", "size", "scaling_size",
                "scaling_rounds"):
        if getattr(args, key) is not None:
            prof[key] = getattr(args, key)
    if args.scaling_threads:
        prof["scaling_threads"] = split_list(p, args.scaling_threads,
                                             what="thread count", conv=int)
    if args.scaling_factors:
        prof["scaling_factors"] = split_list(p, args.scaling_factors,
                                             what="size factor", conv=int)
    if prof["rounds"] < 1 or prof["warmup"] < 0 or prof["size"] <= 0 or \
            prof["scaling_size"] <= 0 or \
            args.threads < 1 or prof["scaling_rounds"] < 1 or \
            min(prof["scaling_threads"]) < 1 or \
            min(prof["scaling_factors"]) < 1:
        p.error("rounds, threads, sizes and factors must be positive")
    variants = (split_list(p, args.variants, VARIANTS, "variant")
                if args.variants else list(VARIANTS))
    variants = [v for v in VARIANTS if v in variants]  # canonical order

    sources = {os.path.basename(f)[:-2]: os.path.abspath(f)
               for f in sorted(glob.glob(os.path.join(args.workload_dir,
                                                      "*.c")))}
    if args.list:
        for n in sources:
            print(n)
        return 0
    if not sources:
        print("bench: no workloads (*.c) in %s" % args.workload_dir,
              file=sys.stderr)
        return 1
    if args.workloads:
        names = split_list(p, args.workloads, list(sources), "workload")
        sources = {n: sources[n] for n in names}
    names = list(sources)

    paths = Paths(args)
    scaling_variants = []
    scaling_names = []
    if not args.no_scaling:
        scaling_variants = ["native"] + [
            v for v in split_list(p, args.scaling_variants, VARIANTS,
                                  "variant") if v != "native"]
        scaling_names = (split_list(p, args.scaling_workloads, names,
                                    "workload")
                         if args.scaling_workloads else names)
    # Without clang (or the pass), its variants are left out, not failed.
    skipped = clang_skips(paths, set(variants) | set(scaling_variants),
                          next(iter(sources.values())))
    for why in dict.fromkeys(skipped.values()):
        log("bench: SKIPPING %s: %s" % (", ".join(
            v for v in skipped if skipped[v] == why), why))
    variants = [v for v in variants if v not in skipped]
    if scaling_variants[1:] and \
            not [v for v in scaling_variants[1:] if v not in skipped]:
        log("bench: no scaling runs: none of --scaling-variants but "
            "native can run")
        scaling_variants = []
    scaling_variants = [v for v in scaling_variants if v not in skipped]

    cfg = {
        "mode": "smoke" if args.smoke else "quick" if args.quick else "full",
        "variants": variants, "workloads": names, "threads": args.threads,
        "size": prof["size"], "rounds": prof["rounds"],
        "warmup": prof["warmup"], "floor_flag": args.floor_flag,
        "cc": args.cc, "workload_dir": os.path.abspath(args.workload_dir),
        "timing": "bench-spawn: CLOCK_MONOTONIC around posix_spawn + "
                  "wait4; peak RSS = wait4 ru_maxrss; medians over rounds",
        "order": "per workload: the variants alternately, "
                 "warm-up rounds first",
    }
    if skipped:
        cfg["skipped"] = skipped

    binaries = {BINARY_OF[v] for v in variants}
    if scaling_variants:
        cfg.update({k: prof[k] for k in ("scaling_threads", "scaling_size",
                                         "scaling_factors", "scaling_rounds")})
        cfg["scaling_variants"] = scaling_variants
        binaries |= {BINARY_OF[v] for v in scaling_variants}

    try:
        need = [(paths.spawn, True,
                 "make " + os.path.relpath(paths.spawn, ROOT)),
                (paths.valor, binaries & {"floor", "valor", "valor-pass"},
                 "make all"),
                (paths.runtime, binaries & {"valor", "valor-pass"},
                 "make runtime"),
                (paths.floor_lib, "floor" in binaries,
                 "make " + os.path.relpath(paths.floor_lib, ROOT))]
        for path, needed, how in need:
            if needed and not os.path.exists(path):
                raise BenchError("%s is missing: run make bench (or %s)"
                                 % (path, how))
        cfg["build"] = {b: [shlex.join(c).replace(ROOT + "/", "").replace(
                                "@OUT@", os.path.join(os.path.relpath(
                                    paths.bin, ROOT), b, "NAME"))
                            for c in cmds]
                        for b, (_, cmds, _) in build_commands(
                            paths, args.cc, "NAME.c", "NAME").items()
                        if b in binaries}
        if "floor" in binaries and "valor" in binaries:
            cfg["floor_cc1_options"] = check_floor_flags(
                paths, args.cc, next(iter(sources.values())))
            log("floor flags: valor cc -c and the valor one-step build give "
                "cc1 the same options: " + " ".join(cfg["floor_cc1_options"]))
    except BenchError as e:
        print("bench: " + str(e), file=sys.stderr)
        return 1

    build_errors = {}
    if not args.no_build:
        build_errors = build_all(paths, args.cc, sources, binaries, args.jobs)
    for n in names:
        for b in binaries:
            if (n, b) not in build_errors and not os.access(
                    os.path.join(paths.bin, b, n), os.X_OK):
                build_errors[(n, b)] = ("%s is missing (build it: run "
                                        "without --no-build)"
                                        % os.path.join(paths.bin, b, n))

    runner = Runner(args, paths, sources)
    for (n, b), e in sorted(build_errors.items()):
        for v in VARIANTS:
            if BINARY_OF[v] == b and (v in variants or
                                      v in scaling_variants):
                runner.failures.append((n, v, "build failed: " + e))
        log("FAILED to build %s [%s]: %s" % (n, b, e))

    uses_clang = bool(binaries & {"native-clang", "valor-pass"})
    res = {"schema": SCHEMA,
           "date": datetime.datetime.now(datetime.timezone.utc)
           .isoformat(timespec="seconds"),
           "machine": machine_info(args.cc, uses_clang), "config": cfg,
           "workloads": {}, "scaling": {}}
    t_start = time.monotonic()
    for i, n in enumerate(names):
        missing = {v for v in variants if (n, BINARY_OF[v]) in build_errors}
        log("[%d/%d] %s" % (i + 1, len(names), n))
        entry = bench_workload(runner, n,
                               [v for v in variants if v not in missing],
                               dict(prof, threads=args.threads,
                                    floor_flag=args.floor_flag))
        for v in missing:
            entry["status"] = "failed"
            entry["errors"][v] = "build failed: " + \
                build_errors[(n, BINARY_OF[v])]
        res["workloads"][n] = entry

    if scaling_variants:
        ok_names = [n for n in scaling_names
                    if not any((n, BINARY_OF[v]) in build_errors
                               for v in scaling_variants)]
        top = max(prof["scaling_factors"])
        base = prof["size"] / top
        tpoints = [(t, t, prof["scaling_size"])
                   for t in prof["scaling_threads"]]
        spoints = [(f, args.threads, base * f)
                   for f in prof["scaling_factors"]]
        scfg = dict(prof)
        log("thread scaling: %s threads, size %s"
            % (",".join(map(str, prof["scaling_threads"])),
               fmt_size(prof["scaling_size"])))
        res["scaling"]["threads"] = scaling_run(runner, ok_names,
                                                scaling_variants, tpoints,
                                                "threads", scfg)
        log("memory-size scaling: sizes %s"
            % ",".join(fmt_size(s) for _, _, s in spoints))
        res["scaling"]["size"] = scaling_run(runner, ok_names,
                                             scaling_variants, spoints,
                                             "size", scfg)
        res["scaling"]["size"]["base"] = base
    res["elapsed_s"] = round(time.monotonic() - t_start, 1)

    # The summary first, for a reader of the file; then the details.
    res = dict(list(res.items())[:4] + [
        ("geomean", compute_geomeans(res["workloads"], variants))] +
        list(res.items())[4:])
    res["geomean_over"] = [n for n, w in res["workloads"].items()
                           if w["status"] == "ok"]
    res["floor_high"] = [
        {"workload": n, "floor_vs_native": w["variants"]["floor"]["vs_native"]}
        for n, w in res["workloads"].items() if w.get("floor_high")]
    res["targets"] = check_targets(res["workloads"], res["geomean"])
    res["failures"] = [{"workload": n, "variant": v, "error": e}
                       for n, v, e in runner.failures]

    os.makedirs(paths.out, exist_ok=True)
    text = report(res)
    plot_error = plot(res, paths.out)
    res["plot"] = None if plot_error else "results.png"
    if plot_error:
        res["plot_error"] = plot_error
    with open(os.path.join(paths.out, "results.json.tmp"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(os.path.join(paths.out, "results.json.tmp"),
               os.path.join(paths.out, "results.json"))
    with open(os.path.join(paths.out, "results.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    print("Wrote %s/results.json, results.txt%s (%.0f s of runs)"
          % (os.path.relpath(paths.out), "" if plot_error else ", results.png",
             res["elapsed_s"]))
    if plot_error:
        print("NO PLOT: " + plot_error)
    if runner.failures:
        print("bench: %d failure(s); see FAILURES above" %
              len(runner.failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
