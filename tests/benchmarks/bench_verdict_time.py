"""Time to a verdict: how long `mkldnn-explorer model NET` takes from start to its answer line, and where
that time goes (issue 36 item 4).

Runs the real CLI in a fresh process per round and stamps each progress line it prints on stderr, so the
phases are read from outside the tool: start -> inventory line (load + inventory), the per-layer table
(first "[1/N]" to the last layer), the mkldnn_chained rows and the reference layer (last layer -> "mode 1"),
then each mode (its "mode k/N" line to the next, the last one to exit). With --tree OLD (another checkout,
e.g. `git worktree add --detach /tmp/old main`) the rounds alternate old / new (this script's checkout), so a
busy machine weighs on both alike; each run imports its own tree and starts in an empty folder. The load
average is printed before and after each round.

    python tests/benchmarks/bench_verdict_time.py [--nets resnet50,resnet18] [--rounds 2] [--tree /tmp/old]
        [-- extra CLI arguments]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

# Makes a child python import the tree on PYTHONPATH rather than the venv's editable install (its meta-path
# finder would otherwise win over PYTHONPATH, in the measuring child too).
SITE = ('import sys\nsys.meta_path[:] = [f for f in sys.meta_path if "editable" not in '
        'getattr(f, "__module__", "") and "editable" not in repr(f)]\n')


THIS_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Every run starts in an empty folder: `python -c` puts the current folder first on sys.path, so a run started
# from a checkout imported that checkout's explorer whatever PYTHONPATH said (old and new were one code).
NEUTRAL_CWD = tempfile.mkdtemp(prefix="verdict_cwd_")


def tree_env(tree: str) -> dict:
    env = dict(os.environ)
    site = tempfile.mkdtemp(prefix="verdict_site_")
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write(SITE)
    env["PYTHONPATH"] = os.pathsep.join([site, tree])
    return env


def one_round(net: str, extra: list[str], env: dict) -> dict:
    """One CLI run: total seconds, the phases, the answer line."""
    cmd = [sys.executable, "-c", "import sys; from explorer.launch import main; sys.argv[0]='mkldnn-explorer'; "
           "sys.exit(main())", "model", net, *extra]
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=NEUTRAL_CWD)
    stamps: list[tuple[float, str]] = []
    for line in p.stderr:
        stamps.append((time.perf_counter() - t0, line.rstrip()))
    out = p.stdout.read()
    p.wait()
    total = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the CLI and its measuring child, both reaped by now
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    phases: dict[str, float] = {}
    inv = stamps[0][0] if stamps else None  # the inventory's summary is the first line printed
    layers = [t for t, s in stamps if re.match(r"\[\d+/\d+\]", s)]
    modes = [(t, s.split()[2]) for t, s in stamps if re.match(r"mode \d+/\d+: ", s)]
    if inv is not None:
        phases["load+inventory"] = inv
    if layers and modes:
        # the last layer's line starts it; what runs between it and mode 1 is its rows + mkldnn_chained + refs
        phases["per-layer table (to last layer start)"] = layers[-1] - layers[0]
        phases["last layer + mkldnn_chained + reference"] = modes[0][0] - layers[-1]
    for k, (t, name) in enumerate(modes):
        end = modes[k + 1][0] if k + 1 < len(modes) else total
        phases[f"mode {name}"] = end - t
    answer = next((s for s in out.splitlines() if s.startswith("answer:")), "")
    return {"total": total, "cpu": cpu, "phases": phases, "answer": answer, "rc": p.returncode, "out": out}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nets", default="resnet50")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tree", default=None, help="another checkout to alternate with (the 'old' code)")
    ap.add_argument("--show-out", action="store_true")
    args, extra = ap.parse_known_args()
    extra = [a for a in extra if a != "--"]
    this = tree_env(THIS_TREE)  # the checkout this script is in, not whatever the venv installed
    trees = [("old", tree_env(os.path.abspath(args.tree))), ("new", this)] if args.tree else [("this", this)]
    for net in args.nets.split(","):
        for k in range(args.rounds):
            for label, env in trees:
                before = os.getloadavg()[0]
                r = one_round(net, extra, env)
                after = os.getloadavg()[0]
                ph = ", ".join(f"{n} {v:.1f}" for n, v in r["phases"].items())
                print(f"{net} round {k + 1} {label}: {r['total']:.1f} s wall, {r['cpu']:.1f} s CPU (exit {r['rc']}; load {before:.2f} -> "
                      f"{after:.2f})\n  phases (s): {ph}\n  {r['answer']}", flush=True)
                if args.show_out:
                    print(r["out"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
