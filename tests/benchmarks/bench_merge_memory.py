"""Peak memory of `python -m explorer merge` on two big pieces (issue 33: memory independent of file size).

Not run by the test suite. Builds two pieces of --size-mb each in a temp folder, in the tool's own CSV format
(one real row, formatted by the tool, written again with its problem_index and started_at changed, so the
file is made quickly), then runs merge in a child process per round and reads the child's peak RSS
(resource.getrusage(RUSAGE_CHILDREN).ru_maxrss, one child per round, so each figure is that child's own).
Sizes and trees alternate round by round (the machine is shared).

    nice .venv/bin/python tests/benchmarks/bench_merge_memory.py --size-mb 200 20 --rounds 2
    nice .venv/bin/python tests/benchmarks/bench_merge_memory.py --size-mb 20 --tree /tmp/old-main   # another checkout
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_piece(path: Path, size_mb: float, first_index: int) -> int:
    """A results CSV of about size_mb, written line by line; its row count."""
    from explorer.core.problem.spec import parse_descriptor
    from explorer.core.report.results import CSV_COLUMNS, Result, rows_to_csv_text

    spec = parse_descriptor('mb32ic64ih56oc64oh56kh3ph1n"res2a_branch2b*3"')
    row = Result(spec=spec, path="dense", threads=2, median_ms=1.234, samples=100, gflops=456.7, quality="ok",
                 quality_reason="", cpu="AMD EPYC", torch_version="2.13.0", isa="avx2").row()
    header = rows_to_csv_text([])
    i_index, i_started = CSV_COLUMNS.index("problem_index"), CSV_COLUMNS.index("started_at")
    cells = next(csv.reader(io.StringIO(rows_to_csv_text([row])[len(header):])))
    target = size_mb * 1e6
    n = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(header)
        written = len(header)
        while written < target:
            chunk = io.StringIO()
            w = csv.writer(chunk, lineterminator="\n")
            for _ in range(5000):
                cells[i_index] = str(first_index + n)
                cells[i_started] = f"2026-12-03T13:{(n // 60) % 60:02d}:{n % 60:02d}"
                w.writerow(cells)
                n += 1
            text = chunk.getvalue()
            f.write(text)
            written += len(text)
    return n


def merge_peak(folder: Path, tree: str | None) -> tuple[float, float, str]:
    """(peak RSS in MB, seconds, the closing line) of one merge child."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    out = folder / "merged.csv"
    if out.exists():
        out.unlink()
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "explorer", "merge", "a.csv", "b.csv", "--csv", "merged.csv"],
                          cwd=folder, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"merge failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, seconds, proc.stderr.strip()


def one_round(size_mb: float, tree: str | None) -> tuple[float, float, str, int]:
    """In a child of its own, so RUSAGE_CHILDREN is this merge's alone."""
    with tempfile.TemporaryDirectory(prefix="bench-merge-") as d:
        folder = Path(d)
        rows = build_piece(folder / "a.csv", size_mb, 0) + build_piece(folder / "b.csv", size_mb, 10**7)
        peak, seconds, line = merge_peak(folder, tree)
        return peak, seconds, line, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=float, nargs="+", default=[200.0], help="size of each of the two pieces")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tree", action="append", default=[], help="also run merge from this checkout (PYTHONPATH)")
    ap.add_argument("--child", nargs=2, metavar=("SIZE_MB", "TREE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one measured round; prints its figures for the parent
        size, tree = float(args.child[0]), args.child[1] or None
        peak, seconds, line, rows = one_round(size, tree)
        print(f"{peak:.1f}\t{seconds:.1f}\t{rows}\t{line}")
        return
    trees = [""] + args.tree
    print(f"{'tree':28s} {'piece MB':>8s} {'rows':>9s} {'peak RSS MB':>11s} {'merge s':>8s}")
    for rnd in range(args.rounds):
        for size in (args.size_mb if rnd % 2 == 0 else args.size_mb[::-1]):
            for tree in (trees if rnd % 2 == 0 else trees[::-1]):
                proc = subprocess.run([sys.executable, __file__, "--child", str(size), tree], capture_output=True,
                                      text=True)
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr.strip()[-400:])
                peak, seconds, rows, line = proc.stdout.strip().split("\t", 3)
                print(f"{tree or 'this checkout':28s} {size:8.0f} {int(rows):9d} {float(peak):11.1f} "
                      f"{float(seconds):8.1f}   ({line})", flush=True)


if __name__ == "__main__":
    main()
