"""Issue #32: every benchdnn word on a line is honoured or refused by name (exit 2, one sentence), never dropped."""

import glob
import os

import pytest

from explorer.cli import build_parser, main
from explorer.core.errors import SpecError
from explorer.core.problem.spec import option_refusal, parse_descriptor, strip_comment

DESC = "mb1ic8ih8oc8oh8kh3ph1"


@pytest.mark.parametrize("argv, word", [
    (["run", f"--dir=BWD {DESC}"], "--dir=BWD"),  # not a benchdnn direction (BWD_D is honoured now)
    (["run", f"--attr-post-ops=add:f32 {DESC}"], "--attr-post-ops=add:f32"),  # binary: a second tensor
    (["run", f"--alg=wino {DESC}"], "--alg=wino"),
    (["run", f"--stag=aBx16b {DESC}"], "--stag=aBx16b"),  # a blocked tag (nhwc is honoured: channels_last)
    (["run", f"--attr-scales=src:common:0.5 {DESC}"], "--attr-scales=src:common:0.5"),
    (["run", f"--bogus-option=1 {DESC}"], "--bogus-option=1"),
    (["run", f"--dir=FWD {DESC}", "--list"], "--dir=FWD"),
    (["sweep", f"--alg=wino {DESC}", "--vary", "mb=1,2"], "--alg=wino"),
    (["run", "--dt=bf16", DESC], "--dt=bf16"),  # not an abbreviation of --dtype any more
    (["run", f"--dt=f32:bf16:bf16 {DESC}"], "--dt=f32:bf16:bf16"),  # mixed: not timed as its first type
    (["run", f"--dt=f32,bf16 {DESC}"], "--dt=f32,bf16"),  # a list is several problems
])
def test_a_word_not_honoured_exits_2_naming_it(argv, word, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_no_parser_takes_abbreviations():
    parser = build_parser()
    subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"][0]
    assert not parser.allow_abbrev and all(not p.allow_abbrev for p in subs.choices.values())


def test_honoured_words_still_apply():
    s = parse_descriptor(f"--dir=FWD_D --cfg=bf16bf16bf16 --mb=4 {DESC}")
    assert (s.bias, s.dtype, s.mb) == (False, "bf16", 4)
    # benchdnn's FWD_I has no bias unless --bia-dt gives one (res.hpp: only FWD_B and BWD_WB carry FLAG_BIA)
    assert not parse_descriptor(f"--dir=FWD_I --dt=f16 {DESC}").bias
    assert parse_descriptor(f"--dir=FWD_I --bia-dt=f16 --dt=f16 {DESC}").bias
    assert main(["run", f"--dir=FWD_B {DESC}", "--list"]) == 0


def test_every_line_of_the_benchdnn_inputs_is_honoured_or_refused_by_name():
    files = sorted(glob.glob("/work/shared/benchdnn-inputs/*"))
    if not files:
        pytest.skip("no benchdnn inputs on this machine")
    lines = 0
    for f in files:
        if os.path.basename(f) in ("LICENSE", "README.md"):
            continue
        for raw in open(f, encoding="utf-8", errors="replace"):
            line = strip_comment(raw).strip()
            if not line:
                continue
            lines += 1
            words = line.split()
            opts = [w for w in words if w.startswith("--")]
            try:
                spec = parse_descriptor(line, sizes=False)
            except SpecError as e:
                refused = [w for w in opts if option_refusal(w)]
                # refused: the sentence names the first word not honoured (or the descriptor's own fault)
                assert not refused or refused[0][:37] in str(e), (f, line, str(e))
                continue
            assert all(not option_refusal(w) for w in opts), (f, line)  # nothing it kept is dropped
            assert spec.validate(sizes=False) is spec
    assert lines > 0


def test_a_batch_table_tells_apart_lines_of_one_shape_by_their_words(tmp_path, monkeypatch, capsys):
    """A batch of one shape under --dir=BWD_D, a relu post-op and --dt=bf16 printed three identical problem
    cells (the CSV had the columns, the table and the progress lines did not): each is named now."""
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    monkeypatch.setenv("MKLDNN_EXPLORER_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "b.txt"
    f.write_text(f"{DESC}\n--dir=BWD_D\n{DESC}\n--reset\n--attr-post-ops=relu\n{DESC}\n--reset\n--dt=bf16 {DESC}\n")
    assert main(["batch", str(f), "--paths", "dense", "--budget-ms", "5", "--threads", "1", "--no-trace"]) == 0
    out, err = capsys.readouterr()
    cells = {line.split()[0]: line.split()[3] if line.split()[3] != "dense" else "" for line in out.splitlines()
             if line[:1].isdigit() and " dense " in line}
    assert cells == {"1": "", "3": "BWD_D", "6": "relu", "8": "bf16"}, out
    assert "line 3: mb1ic8ih8oc8oh8kh3ph1 (BWD_D)" in err


def test_a_benchdnn_option_outside_the_quotes_says_where_it_goes(capsys):
    """`run --dir=BWD_D DESC` (no quotes around the line): argparse's 'unrecognized arguments' alone gave no hint."""
    assert main(["run", "--dir=BWD_D", DESC, "--budget-ms", "20"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --dir=BWD_D" in err
    assert "inside the problem line's quotes" in err and "Traceback" not in err
    assert main(["run", DESC, "--no-such-flag"]) == 2  # not a benchdnn word: no hint
    assert "quotes" not in capsys.readouterr().err
