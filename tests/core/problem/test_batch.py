"""benchdnn batch files: comments, names, options, line numbers of bad lines, shipped batches."""

import math

import pytest

from explorer.core.errors import InputError
from explorer.core.problem.batch import load_batch, parse_batch, read_batch_text, shipped_batches

TEXT = '''# a whole-line comment

mb1ic8ih8oc8kh3ph1n"first"        # a trailing comment
   mb1ic8ih8oc16oh8kh3ph1 n"spaced name: a#b"
--dir=FWD_D --cfg=bf16bf16bf16
ic8ih8oc8kh1
not_a_descriptor
--stag=aBx16b --attr-post-ops=relu
mb1ic8ih8oc8oh7kh3ph1
--reset
--mb=4
ic8ih8oc8kh1
--mb=0 --dt=f16:f16:f16
mb3ic8ih8oc8kh1
--reset --cfg=f32bf16bf16
ic8ih8oc8kh1
--reset --dir=BWD_WB
ic8ih8oc8kh1
--reset --stag=nhwc
g3ic8ih8oc8kh1
'''


def _by_line(batch):
    return {p.line: p for p in batch.points}


def test_lines_names_comments_and_options():
    b = parse_batch(TEXT, "t.txt")
    pts = _by_line(b)
    assert sorted(pts) == [3, 4, 6, 7, 9, 12, 14, 16, 18, 20]
    assert [p.index for p in b.points] == list(range(10))
    first = pts[3].spec
    assert (first.desc, first.name, first.dtype, first.bias) == ("mb1ic8ih8oc8oh8kh3ph1", "first", "f32", True)
    assert pts[4].spec.name == "spaced name: a#b" and pts[4].spec.oc == 16
    # --dir=FWD_D and --cfg=bf16... apply to the lines after them
    assert (pts[6].spec.dtype, pts[6].spec.bias, pts[6].spec.mb) == ("bf16", False, 2)
    assert pts[7].skipped and pts[7].error.startswith("line 7: cannot read the descriptor")
    assert pts[7].text == "not_a_descriptor"
    # --stag=aBx16b (a blocked tag) on line 8 applies to line 9: refused by name, with the line that set it, never timed
    assert pts[9].refused and pts[9].spec is None and pts[9].error.startswith("line 9: --stag=aBx16b (set on line 8): ")
    # benchdnn takes the given oh and derives the right pad from it: top 1, bottom 0 (was refused before)
    s9 = parse_batch("mb1ic8ih8oc8oh7kh3ph1").points[0].spec
    assert (s9.ph, s9.pad_r("h"), s9.oh, s9.ow) == (1, 0, 7, 7)
    assert [b.points[i].line for i in b.bad] == [7, 20]
    # --reset, then --mb=4
    assert (pts[12].spec.mb, pts[12].spec.dtype, pts[12].spec.bias) == (4, "f32", True)
    # --mb=0 means the descriptor's own mb; --dt=f16:...
    assert (pts[14].spec.mb, pts[14].spec.dtype) == (3, "f16")
    assert pts[16].refused and pts[16].error.startswith("line 16: --cfg=f32bf16bf16 (set on line 15): ")
    # --dir=BWD_WB is honoured: the line runs as the backward by weights and bias (benchdnn's bias on)
    assert not pts[18].refused and (pts[18].spec.direction, pts[18].spec.bias) == ("BWD_WB", True)
    assert pts[20].skipped and pts[20].error.startswith("line 20: g=3 does not divide ic=8")


def test_refused_problems_are_listed_by_word_and_line():
    """Issue 32: a batch's options follow the same rule as a line: every problem whose options are not
    honoured is a refused point naming the word, the line that set it, and why (was: `ignored` and timed)."""
    b = parse_batch(TEXT, "t.txt")
    assert [p.line for p in b.refused] == [9, 16]  # line 18's --dir=BWD_WB is honoured (a backward row)
    assert all(p.spec is None and p.skipped for p in b.refused)  # nothing refused is timed
    lines = b.refused_lines()
    assert len(lines) == 2 and lines[0].startswith("  refused 1 problem (t.txt:9): --stag=aBx16b (set on line 8): ")
    assert b.refused_sentence().startswith("t.txt line 9: --stag=aBx16b") and "(2 refused problems in all" in \
        b.refused_sentence()
    assert parse_batch("ic8ih8oc8kh1").refused_sentence() == ""


def test_list_options_make_one_problem_per_value():
    """benchdnn's vector options: each descriptor runs once per combination of the lists' values."""
    b = parse_batch("--dt=f32,bf16,u8:s8:u8 --dir=FWD_B,FWD_D\nic8ih8oc8kh1\n")
    got = [(p.spec.dtype, p.spec.bias) if p.spec else p.error.split(":")[1].strip() for p in b.points]
    # int8 is honoured since issue 32's int8 part: its own rows, on the int8 paths
    assert got == [("f32", True), ("f32", False), ("bf16", True), ("bf16", False), ("u8s8u8", True), ("u8s8u8", False)]
    assert [p.spec.mb for p in parse_batch("--mb=1,4,0\nmb3ic8ih8oc8kh1\n").points] == [1, 4, 3]


def test_every_option_means_what_benchdnn_means():
    # FWD_I and FWD_D carry no bias unless --bia-dt names one (benchdnn's res.hpp: only FWD_B and BWD_WB do)
    b = parse_batch("--dir=FWD_I\nic8ih8oc8kh1\n--bia-dt=f32\nic8ih8oc8kh1\n--dir=FWD_D --bia-dt=undef\nic8ih8oc8kh1\n")
    assert [p.spec.bias for p in b.points] == [False, True, False]
    # mixed data types are not one data type: refused, not timed as the first one
    mixed = parse_batch("--dt=f32:bf16:bf16\nic8ih8oc8kh1\n--cfg=bf16bf16f32\nic8ih8oc8kh1\n").points
    assert all(p.refused for p in mixed) and "--dt=f32:bf16:bf16" in mixed[0].error
    # words restating benchdnn's defaults are honoured: they change nothing
    quiet = parse_batch("--stag=any --wtag=any --dtag=any --alg=direct --attr-post-ops= --skip-impl= "
                        "--allow-enum-tags-only=0\nic8ih8oc8kh1\n")
    assert not quiet.refused and quiet.points[0].spec.dtype == "f32"
    # --match keeps only the problems whose benchdnn line matches; the others are counted, not run
    m = parse_batch('--match=.*kh3.*\nic8ih8oc8kh1\nic8ih8oc8kh3ph1\n--reset\nic8ih8oc8kh1n"x"\n')
    assert [(p.line, p.spec.kh) for p in m.points] == [(3, 3), (5, 1)] and m.filtered == 1


def test_an_included_files_reset_resets_the_includer(tmp_path):
    # benchdnn keeps one set of settings across --batch= files: a --reset inside one resets them all
    (tmp_path / "inner.txt").write_text("--reset\n")
    (tmp_path / "outer.txt").write_text("--dir=BWD_D\n--batch=inner.txt\nic8ih8oc8kh1\n")
    b = load_batch(str(tmp_path / "outer.txt"))
    assert not b.refused and b.points[0].spec.bias


def test_cli_overrides_beat_the_file():
    b = parse_batch(TEXT, mb=1, dtype="f32", bias=True)
    pts = _by_line(b)
    assert (pts[6].spec.dtype, pts[6].spec.bias, pts[6].spec.mb) == ("f32", True, 1)
    assert pts[12].spec.mb == 1 and pts[14].spec.mb == 1
    assert not pts[16].skipped  # --dtype given: the file's data type does not matter
    # the bias setting of the CLI beats the file; the line's --dir=BWD_WB stays a backward row
    assert (pts[18].spec.direction, pts[18].spec.bias) == ("BWD_WB", True)
    assert parse_batch(TEXT, bias=False).points[8].skipped  # BWD_WB without a bias: one sentence, not timed


def test_bad_mb_option_and_inline_options():
    b = parse_batch("--mb=abc\nic8ih8oc8kh1\n--dir=FWD_D ic8ih8oc8kh1 ic8ih8oc8kh3ph1\n")
    assert b.points[0].skipped and b.points[0].line == 1 and "--mb=abc" in b.points[0].error
    assert [(p.line, p.spec.bias, p.spec.kh) for p in b.points[1:]] == [(2, True, 1), (3, False, 1), (3, False, 3)]


def test_no_problems_is_an_input_error():
    with pytest.raises(InputError, match="no convolution lines"):
        parse_batch("# only comments\n\n--reset\n", "empty.txt")
    with pytest.raises(InputError, match="--mb"):
        parse_batch("ic8ih8oc8kh1", mb=0)


@pytest.mark.parametrize("name", ["resnet_50", "mobilenet_dw", "resnext_101", "vgg_19", "quick"])
def test_shipped_batches_parse_completely(name):
    assert name in shipped_batches()
    b = load_batch(name, mb=1)
    assert b.source == name and b.points and not b.skipped
    assert all(p.spec.mb == 1 and p.spec.name for p in b.points)


def test_shipped_batch_by_name_with_suffix_and_by_path(tmp_path):
    assert read_batch_text("quick.txt")[0] == "quick"
    f = tmp_path / "mine.txt"
    f.write_text("mb1ic8ih8oc8kh1\n")
    source, text = read_batch_text(str(f))
    assert source == str(f) and text.startswith("mb1")


def test_unreadable_batches_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no shipped batch of that name.*resnet_50"):
        read_batch_text("resnet_51")
    with pytest.raises(InputError, match="no such file"):
        read_batch_text(str(tmp_path / "missing.txt"))
    with pytest.raises(InputError, match="folder"):
        read_batch_text(str(tmp_path))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(InputError, match="not a text file"):
        read_batch_text(str(binary))


def test_nested_batch_options_carry_over_and_bad_lines_name_their_file(tmp_path):
    # benchdnn applies options to the following lines, into and out of a nested --batch= file
    (tmp_path / "inner.txt").write_text("ic8ih8oc8kh3ph1\nnot_a_line\n--dir=FWD_D\n")
    (tmp_path / "outer.txt").write_text("--mb=3\n--batch=inner.txt\nic4ih4oc4kh1\n--batch=inner.txt --reset\n"
                                        "--batch=outer.txt\n")
    b = load_batch(str(tmp_path / "outer.txt"))
    got = [(b.source_of(p).rsplit("/", 1)[-1], p.line, p.spec.mb if p.spec else None,
            p.spec.bias if p.spec else None) for p in b.points]
    assert got == [("inner.txt", 1, 3, True), ("inner.txt", 2, None, None), ("outer.txt", 3, 3, False),
                   ("inner.txt", 1, 3, False), ("inner.txt", 2, None, None), ("outer.txt", 5, None, None)]
    assert [b.points[i].line for i in b.bad] == [2, 2, 5]
    assert "includes itself" in b.points[5].error
    assert b.bad_lines_sentence().startswith(f"{tmp_path / 'inner.txt'} line 2: ")
    assert "(3 bad lines in all)" in b.bad_lines_sentence()


def test_shipped_batch_by_onednn_file_name():
    assert read_batch_text("shapes_resnet_50")[1] == read_batch_text("resnet_50")[1]
    assert "tests/benchdnn/inputs/conv/shapes_resnet_50" in read_batch_text("shapes_resnet_50")[1]


def test_network_total_weights_layers_by_their_counts():
    """Issue 12: a batch answers "does it help my network?": each layer x its *N count, and a geomean."""
    from explorer.core.problem.batch import batch_summary, layer_count

    assert layer_count("resnet_50:res2a_branch2b*3") == 3 and layer_count("conv1") == 1 and layer_count(None) == 1

    def row(name, path, ms, status="ok"):
        return {"name": name, "desc": name, "dtype": "f32", "threads": 1, "path": path, "status": status,
                "median_ms": ms}

    rows = [row("a*3", "dense", 1.0), row("a*3", "mkldnn", 0.5), row("b", "dense", 2.0), row("b", "mkldnn", 4.0),
            row("c", "dense", 1.0), row("c", "mkldnn", None, "unsupported"),
            {"name": "d", "desc": "x", "path": "", "status": "skipped"}]
    s = batch_summary(rows, "dense")
    assert s.layers == 4 and s.instances == 6
    d, m = s.totals["dense"], s.totals["mkldnn"]
    assert d.total_ms == pytest.approx(3 * 1.0 + 2.0 + 1.0) and d.layers == 3
    assert m.total_ms == pytest.approx(3 * 0.5 + 4.0) and m.layers == 2 and m.common == 2
    assert m.speedup == pytest.approx((3 * 1.0 + 2.0) / (3 * 0.5 + 4.0))  # over the layers both ran
    assert m.geomean == pytest.approx(math.exp((3 * math.log(2.0) + math.log(0.5)) / 4))
    text = "\n".join(s.lines())
    assert "each layer x its *N count" in text and "geomean" in text
    assert "on only 2 of 4 layers (the ones both ran): not the network's verdict" in text
    # CSV rows (text cells) give the same totals
    s2 = batch_summary([{k: (str(v) if v is not None else "") for k, v in r.items()} for r in rows], "dense")
    assert s2.totals["mkldnn"].total_ms == pytest.approx(m.total_ms)


def test_network_total_never_counts_a_ratio_on_a_noisy_row():
    """Issue 26 #1: a ratio on a noisy row is never a finding, in a batch's totals too. Speedup and geomean
    leave out layers where either row is noisy and say how many; a total that sums noisy rows is marked."""
    from explorer.core.problem.batch import batch_summary

    def row(name, path, ms, quality="ok"):
        return {"name": name, "desc": name, "dtype": "f32", "threads": 1, "path": path, "status": "ok",
                "median_ms": ms, "quality": quality}

    rows = [row("a", "dense", 1.0), row("a", "mkldnn", 0.5),  # trusted: 2x
            row("b", "dense", 2.0), row("b", "mkldnn", 0.1, "noisy")]  # noisy: 20x, must not count
    s = batch_summary(rows, "dense")
    m = s.totals["mkldnn"]
    assert m.total_ms == pytest.approx(0.6) and m.noisy == 1 and s.totals["dense"].noisy == 0
    assert m.common == 1 and m.uncertain == 1
    assert m.speedup == pytest.approx(2.0) and m.geomean == pytest.approx(2.0)  # layer b left out
    lines = s.lines()
    mk = next(x for x in lines if x.lstrip().startswith("mkldnn"))
    assert "~0.6 ms" in mk and "(1 noisy)" in mk and "1 noisy left out" in mk
    assert "~" not in next(x for x in lines if x.lstrip().startswith("dense"))
    # every layer noisy: no ratio at all, and the line says why
    every = batch_summary([row("a", "dense", 1.0, "noisy"), row("a", "mkldnn", 0.5)], "dense")
    e = every.totals["mkldnn"]
    assert e.speedup is None and e.geomean is None and e.uncertain == 1
    assert "no trusted ratio" in every.lines()[-1] and "x total" not in every.lines()[-1]
    # CSV rows (text cells, with the quality column) give the same rule
    s2 = batch_summary([{k: str(v) for k, v in r.items()} for r in rows], "dense")
    assert s2.totals["mkldnn"].uncertain == 1 and s2.totals["mkldnn"].speedup == pytest.approx(2.0)


def test_a_ratio_on_fewer_rows_than_the_totals_never_reads_as_the_networks_verdict():
    """Issue 34: "= 2.00x ... [19 noisy layers left out]" stood on one layer while the totals beside it gave
    1.28x. The ratio is "x total" only over the very rows of both totals; else it says on how few it stands."""
    from explorer.core.problem.batch import batch_summary

    def row(name, path, ms, quality="ok"):
        return {"name": name, "desc": name, "dtype": "f32", "threads": 1, "path": path, "status": "ok",
                "median_ms": ms, "quality": quality}

    rows = [row("l0", "dense", 2.0), row("l0", "mkldnn", 1.0)]  # the one trusted layer: 2.00x
    for i in range(1, 20):  # 19 layers where mkldnn's row is noisy and a little slower than dense
        rows += [row(f"l{i}", "dense", 1.0), row(f"l{i}", "mkldnn", 0.9 + 0.01 * i, "noisy")]
    s = batch_summary(rows, "dense")
    d, m = s.totals["dense"], s.totals["mkldnn"]
    totals_ratio = d.total_ms / m.total_ms
    assert m.speedup == pytest.approx(2.0) and m.common == 1 and m.uncertain == 19
    assert abs(totals_ratio - m.speedup) > 0.5 and not m.same_rows
    line = next(x for x in s.lines() if x.lstrip().startswith("mkldnn"))
    assert "2.00x total" not in line and "x total" not in line
    assert ("2.00x, geomean 2.00x, on only 1 of 20 layers (the trusted ones both ran; 19 noisy left out): "
            "not the network's verdict") in line
    # the same rows all trusted: the ratio is the totals' own, and says "total"
    clean = batch_summary([{**r, "quality": "ok"} for r in rows], "dense")
    c = clean.totals["mkldnn"]
    assert c.same_rows and c.speedup == pytest.approx(clean.totals["dense"].total_ms / c.total_ms)
    assert f"{c.speedup:.2f}x total, geomean" in next(x for x in clean.lines() if x.lstrip().startswith("mkldnn"))


def test_onednn_file_syntax_line_breaks_empty_names_and_framework_names():
    """oneDNN's harness files: a word ending in a backslash continues on the next line (common.cpp `batch`),
    a bare trailing `n` is an empty name, and `*5&a1b2` inside a framework's hashed name is text, not a count."""
    b = parse_batch("--mb=1, \\\n      4\nic8ih8oc8kh1n\nic8ih8oc8kh1n\"ab*5&c1d2*3&e5f6\"\n")
    assert [(p.line, p.spec.mb, p.spec.name) for p in b.points] == [(3, 1, ""), (3, 4, ""), (4, 1, "ab*5&c1d2*3&e5f6"),
                                                                    (4, 4, "ab*5&c1d2*3&e5f6")]
    assert not b.bad
