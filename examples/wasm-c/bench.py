#!/usr/bin/env python3
"""Run time of the wasm-c kernels on irkit against real engines and the native build.

For each kernel (primes, collatz, hash, matmul of lib.c/main.c, and prog.c's larger
program) it measures, best of --runs, in one sitting so that the ratios share the machine's
load:

  irkit       the executable of `ir-wasm` + `ir-link --emit exe` (CPU time of the process)
  irkit -O    the same linked with `-O`
  wasmtime    the `wasmtime` Python package (pip install wasmtime): CPU time of the call alone
  v8          node --no-liftoff: CPU time of the call alone
  cc -O2      the C sources compiled natively (CPU time of the process)

then the translation time of one module (--translate, default a generated one), each against
wasmtime's compile of the same bytes (Module(engine, bytes)) with the same kind of checks, best
of --runs: `ir-wasm --main ENTRY` plus `ir-link --emit obj` (a program: its memories get guard
pages and its checks are machine traps under irkit's fault handler) against wasmtime's default
configuration (guard pages, signal handlers); `ir-wasm` plus `ir-link --library --emit obj` (a
library, which installs no handler: every memory access compared, every check a branch to a
trap routine) against wasmtime with `signals_based_traps` off and no guard region (the same:
bounds compared, traps by branches), and, for reference, against its default too. An engine
that is not installed is left out.

  cargo build --release -p irkit-cli && python3 examples/wasm-c/bench.py --runs 3

With --count, each kernel's instructions are counted instead (valgrind's callgrind): the
irkit -O executable against wasmtime's call, the same figure on every run (a time is not).

With --placements N, each irkit executable is linked N times, its code moved by 16 bytes
each time, and its column is the mean of the N bests: code placement alone moves a kernel by
several percent, so two builds compared at one placement each compare two draws.
"""
import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ["primes", "collatz", "hash", "matmul", "program"]

V8_CALL = r"""
const fs = require('fs'); const [dir, k] = process.argv.slice(-2);
(async () => {
  let f;
  if (k === 'program') {
    const p = await WebAssembly.instantiate(fs.readFileSync(dir + '/prog.wasm'), {});
    f = p.instance.exports.bench_program;
  } else {
    const lib = await WebAssembly.instantiate(fs.readFileSync(dir + '/lib.wasm'), {});
    const m = await WebAssembly.instantiate(fs.readFileSync(dir + '/main.wasm'), {lib: lib.instance.exports});
    f = m.instance.exports['bench_' + k];
  }
  const t0 = process.cpuUsage(); f(); const t = process.cpuUsage(t0);
  console.log((t.user + t.system) / 1e6);
})();
"""


def child_cpu(cmd):
    """CPU seconds of running `cmd` to its end (its exit code is a checksum byte: any code
    is fine, a signal is not)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode < 0:
        sys.exit(f"{cmd[0]} died by signal {-r.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build(bindir, work, placements):
    """The irkit executables (plain and -O, each at `placements` code placements) and the
    native ones, per kernel."""
    wasm, link = os.path.join(bindir, "ir-wasm"), os.path.join(bindir, "ir-link")
    lib = os.path.join(work, "lib.irm")
    subprocess.run([wasm, os.path.join(HERE, "lib.wasm"), "-o", lib, "--name", "lib"], check=True)
    exes = {}
    for k in KERNELS:
        irm = os.path.join(work, f"{k}.irm")
        if k == "program":
            src, inputs = "prog.wasm", [irm]
            subprocess.run([wasm, os.path.join(HERE, src), "-o", irm, "--main", "bench_program"],
                           check=True)
        else:
            inputs = [irm, lib]
            subprocess.run([wasm, os.path.join(HERE, "main.wasm"), "-o", irm, "--name", "main",
                            "--main", f"bench_{k}"], check=True)
        for opt in ["", "-O"]:
            flags = [opt] if opt else []
            exe = os.path.join(work, f"{k}{opt}")
            if placements == 1:
                subprocess.run([link, *flags, "--emit", "exe", "-o", exe, *inputs], check=True)
                exes[(k, opt)] = [exe]
                continue
            obj = exe + ".o"
            subprocess.run([link, *flags, "--emit", "obj", "-o", obj, *inputs], check=True)
            exes[(k, opt)] = [placed(obj, i, work) for i in range(placements)]
    cc = os.environ.get("CC", "cc")
    native = os.path.join(work, "native")
    subprocess.run([cc, "-O2", "-o", native] + [os.path.join(HERE, f)
                   for f in ["lib.c", "main.c", "native.c"]], check=True)
    native_prog = os.path.join(work, "native_prog")
    subprocess.run([cc, "-O2", "-DNATIVE_MAIN", "-o", native_prog, os.path.join(HERE, "prog.c")],
                   check=True)
    return exes, native, native_prog


def placed(obj, i, work):
    """`obj` linked as `ir-link --emit exe` links it (`cc OBJ -lm`), its code `16 * i` bytes
    further on (after a function of that size): the same machine code at another address. Code
    placement alone moves a kernel's time by several percent (branch targets and loops against
    cache lines), so comparing two builds at one placement each compares two draws."""
    cc = os.environ.get("CC", "cc")
    exe = f"{obj[:-2]}@{i}"
    objs = [obj]
    if i:
        pad = os.path.join(work, f"pad{i}.s")
        with open(pad, "w") as f:
            f.write(f".text\nirkit_bench_pad:\n.fill {16 * i - 1},1,0x90\nret\n"
                    '.section .note.GNU-stack,"",@progbits\n')
        subprocess.run([cc, "-c", pad, "-o", pad[:-2] + ".o"], check=True)
        objs = [pad[:-2] + ".o", obj]
    subprocess.run([cc, *objs, "-o", exe, "-lm"], check=True)
    return exe


def wasmtime_call(k):
    """CPU seconds of one call of kernel `k` in wasmtime, or None without wasmtime."""
    made = wasmtime_instance(k)
    if made is None:
        return None
    store, f = made
    t0 = time.process_time()
    f(store)
    return time.process_time() - t0


def wasmtime_instance(k):
    """A wasmtime store and the export that runs kernel `k` in it, or None without wasmtime."""
    try:
        import wasmtime
    except ImportError:
        return None
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    if k == "program":
        m = wasmtime.Module.from_file(engine, os.path.join(HERE, "prog.wasm"))
        f = wasmtime.Instance(store, m, []).exports(store)["bench_program"]
    else:
        lib = wasmtime.Module.from_file(engine, os.path.join(HERE, "lib.wasm"))
        main = wasmtime.Module.from_file(engine, os.path.join(HERE, "main.wasm"))
        exports = wasmtime.Instance(store, lib, []).exports(store)
        imports = [exports[i.name] for i in main.imports]
        f = wasmtime.Instance(store, main, imports).exports(store)[f"bench_{k}"]
    return store, f


def instructions(cmd):
    """Instructions `cmd` executes to its end, counted by valgrind's callgrind (the same count
    on every run, unlike a time), or None without valgrind."""
    if not shutil.which("valgrind"):
        return None
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    sys.exit(f"no count from valgrind for {cmd}: {r.stderr[-500:]}")


def counts(exes):
    """The instruction counts of each kernel: its `-O` executable (all of it: the start is
    under a million) against wasmtime's call (the process with the call less the same process
    without it)."""
    print("| kernel | irkit -O (M instructions) | wasmtime call | irkit / wasmtime |")
    print("|---|---|---|---|")
    me = [sys.executable, os.path.abspath(__file__), "--instantiate"]
    engine = importlib.util.find_spec("wasmtime") is not None
    for k in KERNELS:
        irkit = instructions([exes[(k, "-O")][0]])
        wt = None
        if engine:
            with_call, without = instructions(me + [k, "--call"]), instructions(me + [k])
            wt = with_call - without if with_call is not None else None
        ratio = f"{irkit / wt:.3f}" if irkit and wt else "-"
        cells = [f"{c / 1e6:,.0f}" if c else "-" for c in (irkit, wt)]
        print(f"| {k} | " + " | ".join(cells) + f" | {ratio} |")


def v8_call(k):
    """CPU seconds of one call of kernel `k` in V8 (optimizing tier only), or None."""
    if not shutil.which("node"):
        return None
    out = subprocess.run(["node", "--no-liftoff", "-e", V8_CALL, HERE, k],
                         check=True, capture_output=True, text=True).stdout
    return float(out.split()[0])


def translation(bindir, module, runs, work, entry):
    """Best seconds of irkit's translation to an object file, as a library (every memory
    access compared) and, if `entry` names an export, as a program with that entry (its
    memories get guard pages: spec/backends.md, "Linear memories"), and of wasmtime's
    compile."""
    wasm, link = os.path.join(bindir, "ir-wasm"), os.path.join(bindir, "ir-link")
    irm, obj = os.path.join(work, "t.irm"), os.path.join(work, "t.o")
    best_irkit = best_prog = None
    best_wt = {}
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([wasm, module, "-o", irm], check=True)
        subprocess.run([link, "--library", "--emit", "obj", "-o", obj, irm], check=True)
        t = time.perf_counter() - t0
        best_irkit = t if best_irkit is None else min(best_irkit, t)
        if entry:
            t0 = time.perf_counter()
            subprocess.run([wasm, module, "-o", irm, "--main", entry], check=True)
            subprocess.run([link, "--emit", "obj", "-o", obj, irm], check=True)
            t = time.perf_counter() - t0
            best_prog = t if best_prog is None else min(best_prog, t)
        try:
            import wasmtime
        except ImportError:
            continue
        data = open(module, "rb").read()
        for checked in (False, True):
            engine = wasmtime.Engine(wasmtime_config(checked))
            t0 = time.perf_counter()
            wasmtime.Module(engine, data)
            t = time.perf_counter() - t0
            best_wt[checked] = min(best_wt.get(checked, t), t)
    return best_irkit, best_prog, best_wt.get(False), best_wt.get(True)


def wasmtime_config(checked):
    """wasmtime's default configuration, or (`checked`) one without signal handlers or guard
    pages: every memory access compared and every trap a branch, as in an irkit library."""
    import wasmtime
    config = wasmtime.Config()
    if checked:
        config.signals_based_traps = False
        config.memory_reservation = 0
        config.memory_guard_size = 0
    return config


def generated_module(n, work):
    """A module of `n` C functions (loops, a switch, calls, memory), compiled by clang-19 as
    build.sh compiles the examples; prog.wasm if clang-19 is not there."""
    cc = os.environ.get("WASM_CC", "clang-19")
    if not shutil.which(cc):
        return os.path.join(HERE, "prog.wasm")
    src = os.path.join(work, "big.c")
    with open(src, "w") as f:
        f.write("static int mem[4096];\n")
        for i in range(n):
            prev = f"f{i - 1}(x ^ {i}) + " if i else ""
            f.write(f"""__attribute__((noinline)) int f{i}(int x) {{
    int s = {i};
    for (int j = 0; j < (x & 63); j++) {{
        switch ((j + x) % 5) {{
        case 0: s += mem[(j * {i + 3}) & 4095]; break;
        case 1: s ^= x * {2 * i + 1}; mem[(s + j) & 4095] = s; break;
        case 2: s -= (s >> 3) + j; break;
        case 3: s = s * 31 + (x / (j + 1)); break;
        default: s += {prev}1;
        }}
    }}
    return s;
}}
""")
        f.write(f'__attribute__((export_name("run"))) int run(void) {{ return f{n - 1}(7); }}\n')
    out = os.path.join(work, f"big{n}.wasm")
    subprocess.run([cc, "--target=wasm32", "-O2", "-fno-builtin", "-nostdlib", "-Wl,--no-entry",
                    "-o", out, src], check=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(HERE, "../../target/release"),
                    help="where ir-wasm and ir-link are (default: target/release)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--translate", default=None,
                    help="the module whose translation time is measured (default: a module "
                    "of --functions generated C functions compiled by clang-19, else prog.wasm)")
    ap.add_argument("--functions", type=int, default=300)
    ap.add_argument("--placements", type=int, default=1,
                    help="time each irkit executable at this many code placements (its code "
                    "moved by 16 bytes each) and give the mean of their bests")
    ap.add_argument("--count", action="store_true",
                    help="instead of timing, count the instructions each kernel runs (valgrind)")
    ap.add_argument("--instantiate", metavar="KERNEL", help=argparse.SUPPRESS)
    ap.add_argument("--call", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--entry", default=None,
                    help="the export of --translate's module to translate it also as a program "
                    "with that entry (memories with guard pages)")
    args = ap.parse_args()
    if args.instantiate:
        # --count's child: wasmtime instantiated, and the kernel called if --call.
        made = wasmtime_instance(args.instantiate)
        if made is not None and args.call:
            store, f = made
            f(store)
        return
    work = tempfile.mkdtemp(prefix="irkit-bench-")
    try:
        exes, native, native_prog = build(args.bin, work, args.placements)
        if args.count:
            counts(exes)
            return
        cols = ["irkit", "irkit -O", "wasmtime", "v8", "cc -O2"]
        if args.placements > 1:
            print(f"irkit columns: the mean over {args.placements} code placements of the best "
                  f"of {args.runs} runs")
        print("| kernel | " + " | ".join(cols) + " | -O / wasmtime | -O / v8 | -O / cc |")
        print("|---" * (len(cols) + 4) + "|")
        for k in KERNELS:
            best, placed_best = {}, {}
            for _ in range(args.runs):
                cc = [native_prog, "bench"] if k == "program" else [native, k]
                measures = {
                    "irkit": lambda: [child_cpu([e]) for e in exes[(k, "")]],
                    "irkit -O": lambda: [child_cpu([e]) for e in exes[(k, "-O")]],
                    "wasmtime": lambda: wasmtime_call(k),
                    "v8": lambda: v8_call(k),
                    "cc -O2": lambda: child_cpu(cc),
                }
                for name in cols:
                    t = measures[name]()
                    if isinstance(t, list):
                        # Per placement: the best of the runs; the column is their mean.
                        placed_best[name] = [min(a, b) for a, b in
                                             zip(placed_best.get(name, t), t)]
                        best[name] = sum(placed_best[name]) / len(t)
                    elif t is not None:
                        best[name] = min(best.get(name, t), t)

            def ratio(a, b):
                return f"{best[a] / best[b]:.2f}" if a in best and b in best else "-"
            cells = [f"{best[c]:.3f}" if c in best else "-" for c in cols]
            print(f"| {k} | " + " | ".join(cells) + f" | {ratio('irkit -O', 'wasmtime')} | "
                  f"{ratio('irkit -O', 'v8')} | {ratio('irkit -O', 'cc -O2')} |")
        module = args.translate or generated_module(args.functions, work)
        entry = args.entry if args.translate else (
            "run" if module.endswith(f"big{args.functions}.wasm") else "bench_program")
        irkit, prog, wt, wt_checked = translation(args.bin, module, args.runs, work, entry)
        name = os.path.basename(module)
        size = os.path.getsize(module)
        print(f"translation of {name} ({size} B):")
        if prog is not None:
            line = f"  program (entry {entry}): irkit {prog * 1000:.1f} ms"
            if wt is not None:
                line += f", wasmtime {wt * 1000:.1f} ms, ratio {prog / wt:.2f}"
            print(line)
        line = f"  library (every access compared): irkit {irkit * 1000:.1f} ms"
        if wt_checked is not None:
            line += (f", wasmtime without signal handlers {wt_checked * 1000:.1f} ms, ratio "
                     f"{irkit / wt_checked:.2f} (against its default: {irkit / wt:.2f})")
        print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
