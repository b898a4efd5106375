"""Issue 23: a fuzz test over what a user types or a file holds (descriptors, batch lines, CSV cells,
--vary ranges). Whatever comes in, the command line answers exit 0 or 2, no traceback, stderr one line.
Only listing and planning commands run (nothing is measured), so it stays fast."""

import os
import string

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.cli import main

FIELDS = ["mb", "g", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd", "kh", "kw", "sd", "sh", "sw", "pd", "ph",
          "pw", "dd", "dh", "dw", "n"]
NUMBERS = st.one_of(st.integers(-5, 70), st.integers(10 ** 6, 10 ** 30).map(str),
                    st.sampled_from(["0", "-0", "1e3", "nan", "inf", "9" * 300, "9" * 5000, "", "x", "1.5", "0x10"]))
DESCRIPTOR = st.lists(st.tuples(st.sampled_from(FIELDS), NUMBERS), min_size=0, max_size=8).map(
    lambda parts: "".join(f"{k}{v}" for k, v in parts))
NOISE = st.text(alphabet=string.printable + "é*\"", max_size=30)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


def _check(capsys, argv):
    code = main(argv)
    cap = capsys.readouterr()
    assert code in (0, 2), (argv, code, cap.err[-300:])
    assert "Traceback" not in cap.err and "Traceback" not in cap.out, (argv, cap.err[-500:])
    if code == 2:
        assert len(cap.err.strip().splitlines()) >= 1
        assert len(cap.err.strip().splitlines()[-1]) < 2000, argv  # no 5,000-digit echo
    return code, cap


@SETTINGS
@given(desc=st.one_of(DESCRIPTOR, NOISE))
def test_any_descriptor(capsys, desc):
    code, cap = _check(capsys, ["run", desc, "--list"])
    if code == 2:
        assert len(cap.err.strip().splitlines()) == 1, (desc, cap.err)


@SETTINGS
@given(lines=st.lists(st.one_of(DESCRIPTOR, NOISE, DESCRIPTOR.map(lambda d: d + 'n"x*' + "3" + '"'),
                                st.sampled_from(["--mb=0", "--mb=x", "--cfg=s8", "--dir=BWD_D", "--reset",
                                                 "--batch=nope.txt", '--stag=axb', 'n"a*0"', "*1e20"])),
                      min_size=1, max_size=6))
def test_any_batch_file(tmp_path_factory, capsys, lines):
    f = tmp_path_factory.mktemp("fuzz") / "b.txt"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _check(capsys, ["batch", str(f), "--list"])


CELLS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), NUMBERS.map(str), NOISE)


@SETTINGS
@given(cells=st.fixed_dictionaries({"median_ms": CELLS, "threads": CELLS, "iqr_ms": CELLS, "status": st.one_of(
    st.sampled_from(["ok", "error", "skipped"]), NOISE)}))
def test_any_csv_cells(tmp_path_factory, capsys, cells):
    import csv

    d = tmp_path_factory.mktemp("fuzzcsv")
    a = d / "a.csv"
    with open(a, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["desc", "path", "dtype", "threads", "status", "median_ms", "iqr_ms"])
        w.writeheader()
        w.writerow({"desc": "mb1ic8ih6oc8kh3ph1", "path": "dense", "dtype": "f32", **cells})
    code, cap = _check(capsys, ["compare", str(a), str(a), "--json"])
    if code == 2:
        assert len(cap.err.strip().splitlines()) == 1
    else:
        import json

        json.loads(cap.out, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))


VARY = st.one_of(
    st.tuples(st.sampled_from(FIELDS + ["dtype", "threads", "zz"]), NUMBERS, NUMBERS, NUMBERS).map(
        lambda t: f"{t[0]}={t[1]}:{t[2]}:{t[3]}"),
    st.tuples(st.sampled_from(FIELDS), NUMBERS, NUMBERS).map(lambda t: f"{t[0]}={t[1]}:{t[2]}:x{t[2]}"),
    st.tuples(st.sampled_from(FIELDS), st.lists(NUMBERS, max_size=4)).map(
        lambda t: f"{t[0]}=" + ",".join(map(str, t[1]))),
    NOISE,
)


@SETTINGS
@given(vary=VARY)
def test_any_vary_range(tmp_path_factory, capsys, monkeypatch, vary):
    # A valid --vary would measure: the sweep is given a path that cannot be written, so it stops before any
    # work (exit 2) once the plan is accepted; the plan itself is what is fuzzed.
    d = tmp_path_factory.mktemp("fuzzvary")
    code, cap = _check(capsys, ["sweep", "mb1ic8ih6oc8kh3ph1", "--vary", vary, "--csv", str(d / "no" / "x.csv")])
    assert code == 2 and len(cap.err.strip().splitlines()) == 1, (vary, cap.err)
    assert os.listdir(d) == []
