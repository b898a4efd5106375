"""Listing mode over a whole folder of benchdnn conv shape files (e.g. a oneDNN checkout's
tests/benchdnn/inputs/conv/): how many problem lines are accepted, the refusal sentences, and how often
benchdnn's op count (its shortcut) differs from the exact one. Runs nothing; outside the default test run.

    python tests/benchmarks/bench_corpus.py /path/to/oneDNN/tests/benchdnn/inputs/conv
"""

import collections
import sys
from pathlib import Path

from explorer.core.errors import InputError
from explorer.core.problem.batch import parse_batch
from explorer.core.problem.listing import list_batch, summary


def main(folder: str) -> int:
    files = sorted(Path(folder).glob("shapes_*"))
    total = collections.Counter()
    by_ndims = collections.Counter()
    reasons = collections.Counter()
    for f in files:
        try:
            entries = list_batch(parse_batch(f.read_text(), str(f), base_dir=f.parent, sizes=False))
        except InputError as e:
            print(f"{f.name}: {e}")
            continue
        total.update(summary(entries))
        for e in entries:
            by_ndims[e.spec.ndims if e.spec else "refused"] += 1
            if e.spec is None:
                reasons[e.error.split(": ", 1)[-1]] += 1
    n = total["problems"]
    print(f"{len(files)} files, {n} problem lines: {total['accepted']} accepted ({100 * total['accepted'] / max(n, 1):.2f}%),"
          f" {total['refused']} refused; by ndims {dict(by_ndims)}")
    print(f"benchdnn's ops differ from exact_ops for {total['ops_differ']} lines (its count_ops shortcut)")
    for r, c in reasons.most_common(10):
        print(f"  {c} x {r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
