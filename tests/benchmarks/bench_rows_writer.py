"""Results writer cost per row: a 50,000-row batch CSV written and resumed through the real writer (CsvSink).

    nice python tests/benchmarks/bench_rows_writer.py [--rows 50000] [--window 1000] [--dir DIR]

Prints the time of the first and the last `window` rows of the write, their ratio (issue 33: within 1.2x),
then the resume: reading the CSV back (fleet.pieces.resume_rows), its one whole rewrite, and `window` more rows
appended to it. The machine may be busy (other programs), so a last check alternates rounds: `window`/5 rows to
a fresh CSV (rows 1..) and to the big one (rows 50,000..), five times, and prints the medians. Not a test:
nothing here is collected by pytest (no test_ prefix). Uses only CsvSink and resume_rows, so it also runs
against an older tree (PYTHONPATH=that tree) to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from explorer.core.fleet.pieces import resume_rows
from explorer.core.problem.spec import ConvSpec
from explorer.core.report.results import CsvSink, Result


def _rows(n: int, start: int = 0):
    """Batch-like rows (a result of every line of a long batch file): about 500 bytes each, as measured ones."""
    for i in range(start, start + n):
        spec = ConvSpec(mb=1, ic=8 * (1 + i % 64), ih=28, iw=28, oc=8 * (1 + i % 97), kh=3, kw=3, ph=1, pw=1,
                        name=f"line{i}")
        yield Result(spec=spec, path="dense", threads=1, median_ms=0.1 + i % 7 / 10, iqr_ms=0.01, min_ms=0.09,
                     mean_ms=0.11, samples=40, gflops=12.5, stop_reason="precision", budget_ms=500.0,
                     torch_version="2.13.0", onednn_version="3.x", isa="avx2", cpu="AMD EPYC", quality="ok",
                     started_at="2026-12-03T13:00:00")


def _add_all(sink, rows) -> list[float]:
    """Each add's wall time in ms."""
    out = []
    for r in rows:
        t = time.perf_counter()
        sink.add(r)
        out.append((time.perf_counter() - t) * 1e3)
    return out


def _close(sink) -> None:
    close = getattr(sink, "close", None)  # an older CsvSink has none
    if close:
        close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--window", type=int, default=1_000)
    ap.add_argument("--dir", default=None, help="where the CSVs go (default: a temp folder; give a real disk)")
    args = ap.parse_args(argv)
    w = args.window
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        big = Path(d) / "batch.csv"
        print(f"# {args.rows:,} rows into {big} (load {os.getloadavg()[0]:.2f})")
        sink = CsvSink(big)
        sink.flush()
        t0 = time.perf_counter()
        times = _add_all(sink, _rows(args.rows))
        total = time.perf_counter() - t0
        _close(sink)
        first, last = sum(times[:w]), sum(times[-w:])
        print(f"write: {args.rows:,} rows in {total:.1f} s, {os.path.getsize(big) / 1e6:.1f} MB")
        print(f"  first {w:,} rows: {first:.0f} ms ({first / w:.2f} ms a row)")
        print(f"  last {w:,} rows:  {last:.0f} ms ({last / w:.2f} ms a row)")
        print(f"  last/first: {last / first:.2f}x")

        t = time.perf_counter()
        _, rows = resume_rows(big)
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        sink = CsvSink(big, rows=rows)
        sink.flush()
        rewrite_s = time.perf_counter() - t
        more = _add_all(sink, _rows(w, args.rows))
        print(f"resume: read {len(rows):,} rows {read_s:.2f} s, one whole rewrite {rewrite_s:.2f} s, then {w:,} rows "
              f"{sum(more):.0f} ms ({sum(more) / w:.2f} ms a row; {sum(more) / first:.2f}x the first {w:,})")

        small_path = Path(d) / "fresh.csv"
        small = CsvSink(small_path)
        small.flush()
        step = max(1, w // 5)
        at_start, at_end = [], []
        for k in range(5):  # alternated rounds: the machine's load hits both alike
            at_start.append(sum(_add_all(small, _rows(step, k * step))) / step)
            at_end.append(sum(_add_all(sink, _rows(step, args.rows + w + k * step))) / step)
        _close(small)
        _close(sink)
        a, b = statistics.median(at_start), statistics.median(at_end)
        print(f"alternated, 5 rounds of {step} rows: fresh CSV {a:.2f} ms a row, at row {args.rows + w:,}+ "
              f"{b:.2f} ms a row (median of rounds), ratio {b / a:.2f}x; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
