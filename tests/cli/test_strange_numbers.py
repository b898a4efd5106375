"""Issue 23, numbers that are not numbers and messages: a value read from a file is finite and positive or its
line is refused; repeated batch descriptors use their own dense row; every refusal is one readable sentence."""

import json
import os

import pytest

from explorer.cli import main
from explorer.cli.common import EXIT_BAD_INPUT
from explorer.core.jobs import run as runner_mod
from explorer.core.jobs.events import PathFinished
from explorer.core.report.results import Result, write_csv

TINY = "mb1ic8ih6oc8kh3ph1"
FAST = ["--paths", "dense", "--budget-ms", "5", "--no-trace", "--threads", "1"]


def _csv(path, medians):
    from explorer.core.problem.spec import parse_descriptor

    rows = []
    for i, m in enumerate(medians):
        r = Result(spec=parse_descriptor(f"mb1ic8ih6oc{8 * (i + 1)}kh3ph1"), path="dense", threads=1, status="ok")
        r.median_ms = 1.0  # the cell is replaced below where the test gives one
        rows.append(r)
    write_csv(path, rows)
    text = path.read_text().splitlines()
    head = text[0].split(",")
    col = head.index("median_ms")
    for i, m in enumerate(medians, start=1):
        if m is not None:
            cells = text[i].split(",")
            cells[col] = m
            text[i] = ",".join(cells)
    path.write_text("\n".join(text) + "\n")


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf", "0", "-2", "1e999"])
def test_compare_refuses_a_median_that_is_not_a_finite_positive_time(tmp_path, capsys, cell):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _csv(a, [None, cell])
    _csv(b, [None, None])
    for extra in ([], ["--json"]):
        assert main(["compare", str(a), str(b), *extra]) == EXIT_BAD_INPUT
        cap = capsys.readouterr()
        err = cap.err.strip().splitlines()
        assert len(err) == 1 and "line 3" in err[0] and "median_ms" in err[0] and not cap.out
        assert "nanx" not in cap.out and "Traceback" not in cap.err


def test_a_session_with_nan_is_refused(tmp_path):
    from explorer.core.errors import InputError
    from explorer.core.session.store import load_session

    p = tmp_path / "s.json"
    p.write_text('{"format": "mkldnn-explorer-session", "version": 1, "results": [{"median_ms": NaN}]}')
    with pytest.raises(InputError, match="NaN"):
        load_session(p)


def test_repeated_descriptor_gets_vs_dense_from_its_own_row(tmp_path, monkeypatch, capsys):
    """One shape listed twice under two names: each occurrence's dense row is 1.00x against itself."""
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    real = runner_mod.iter_run
    calls = {"n": 0}

    def scaled(spec, *a, **k):
        calls["n"] += 1
        scale = calls["n"]  # the second occurrence runs twice as slow, on purpose
        for ev in real(spec, *a, **k):
            if isinstance(ev, PathFinished):
                ev.result.median_ms = {"dense": 1.0, "mkldnn": 0.5}[ev.result.path] * scale
                ev.result.quality = "ok"
            yield ev

    monkeypatch.setattr(runner_mod, "iter_run", scaled)
    f = tmp_path / "b.txt"
    f.write_text(f'{TINY}n"first"\n{TINY}n"second"\n')
    assert main(["batch", str(f), "--paths", "dense,mkldnn", "--budget-ms", "5", "--no-trace", "--threads", "1"]) == 0
    lines = [ln.split() for ln in capsys.readouterr().out.splitlines() if ln[:1].isdigit()]
    got = {(ln[1], ln[3]): ln[-1] for ln in lines}
    assert got == {("first", "dense"): "1.00x", ("first", "mkldnn"): "2.00x",
                   ("second", "dense"): "1.00x", ("second", "mkldnn"): "2.00x"}


@pytest.mark.parametrize("name,count", [("a*0", "*0"), ("b*-3", "*-3"), ("c*1e20", "*1e20"),
                                        ("d*100000000000000000000", "*10000000000000000...")])
def test_layer_counts_that_are_not_counts_are_refused(tmp_path, capsys, name, count):
    f = tmp_path / "b.txt"
    f.write_text(f'{TINY}n"{name}"\n')
    assert main(["batch", str(f), "--list"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"layer count {count} " in err and "line 1" in err


def _one_line(capsys, argv, *words):
    assert main(argv) == EXIT_BAD_INPUT
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in cap.err, cap.err[-500:]
    for w in words:
        assert w in err[0], err[0]
    return err[0]


def test_kh0_says_what_is_wrong(capsys):
    line = _one_line(capsys, ["run", "mb1ic8ih8oc8oh8kh0", *FAST], "kh (kernel height) is 0", "at least 1")
    assert "but other" not in line


def test_a_huge_number_is_not_echoed_whole(capsys):
    line = _one_line(capsys, ["run", "mb1ic8ih" + "9" * 100_000 + "oc8kh3", *FAST], "characters")
    assert len(line) < 400


def test_modes_with_an_empty_or_repeated_item_are_refused(capsys):
    _one_line(capsys, ["model", "tiny", "--modes", "nchw,,nchw"], "empty item")
    _one_line(capsys, ["model", "tiny", "--modes", "nchw,nchw"], "more than once")


def test_model_input_too_large_is_refused_before_allocating(capsys, monkeypatch):
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    _one_line(capsys, ["model", "tiny", "--mb", "100000000", "--threads", "1"], "reduce --mb")


@pytest.mark.parametrize("cmd", [["trace", "mb64ic256ih512oc256oh512kh3ph1", "--paths", "mkldnn"],
                                 ["layout", "mb64ic256ih512oc256oh512kh3ph1", "--path", "mkldnn"]])
def test_trace_and_layout_have_the_memory_guard(capsys, monkeypatch, cmd):
    from explorer.core.problem import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 2 * 1024 ** 3)  # the same on any machine
    _one_line(capsys, cmd, "needs about", "reduce mb")


FACTORIES = '''
import sys
def exits():
    sys.exit(3)
def interrupts():
    raise KeyboardInterrupt
def number():
    return 5
'''


@pytest.mark.parametrize("fn,words", [("exits", "called sys.exit(3)"), ("interrupts", "raised KeyboardInterrupt"),
                                      ("number", "returned an object of type int")])
def test_a_factory_that_misbehaves_is_one_sentence(tmp_path, monkeypatch, capsys, fn, words):
    (tmp_path / "facmod_i23.py").write_text(FACTORIES)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    _one_line(capsys, ["model", f"facmod_i23:{fn}", "--threads", "1"], words)


def test_a_truncated_pt2_prints_only_the_tools_sentence(tmp_path, capfd, monkeypatch):
    import torch

    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3)).eval()
    good = tmp_path / "good.pt2"
    torch.export.save(torch.export.export(m, (torch.randn(1, 3, 8, 8),)), str(good))
    data = good.read_bytes()
    bad = tmp_path / "trunc.pt2"
    bad.write_bytes(data[: len(data) * 2 // 3])
    assert main(["model", str(bad), "--threads", "1"]) == EXIT_BAD_INPUT
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot load" in err[0], err[:3]


def test_strict_json_turns_nan_into_null():
    from explorer.cli.common import strict_json

    assert json.loads(strict_json({"a": float("nan"), "b": [float("inf"), 1.5]})) == {"a": None, "b": [None, 1.5]}


def test_compare_json_is_strict_when_a_row_has_no_spread(tmp_path, capsys):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    _csv(a, [None, None])
    _csv(b, [None, "2"])
    assert main(["compare", str(a), str(b), "--json"]) == 0
    out = capsys.readouterr().out
    json.loads(out, parse_constant=lambda c: pytest.fail(f"bare {c}"))
    assert os.path.exists(a)
