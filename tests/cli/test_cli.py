"""The command line end to end: exit codes, one-line errors, the CSV it writes."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from explorer.cli import main

TINY = "mb2ic16ih14oc16oh14kh3ph1"


def test_run_writes_six_ok_rows(tmp_path, capsys):
    out = tmp_path / "out.csv"
    assert main(["run", TINY, "--budget-ms", "20", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [r["path"] for r in rows] == ["dense", "channels_last", "native", "mkldnn", "mkldnn_functional", "mkldnn_roundtrip"]
    assert all(r["status"] == "ok" for r in rows)
    for r in rows:
        ops = int(r["ops"])
        assert float(r["gflops"]) == pytest.approx(ops / (float(r["median_ms"]) / 1e3) / 1e9, rel=1e-4)
    table = capsys.readouterr().out
    assert "vs dense" in table and "mkldnn_roundtrip" in table


def test_run_bf16_marks_functional_unsupported(capsys):
    assert main(["run", TINY, "--budget-ms", "5", "--dtype", "bf16", "--json"]) == 0
    rows = {r["path"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert rows["mkldnn_functional"]["status"] == "unsupported"
    assert rows["mkldnn_functional"]["error"]


@pytest.mark.parametrize("argv", [
    ["run", TINY + "g3"],
    ["run", "mb2ic16ih10oc16oh2kh3"],
    ["run", TINY, "--paths", "dense,bogus"],
    ["run", TINY, "--threads", "0"],
    ["run", TINY, "--threads", "abc"],
    ["run", TINY, "--budget-ms", "-5"],
    ["run", TINY, "--dtype", "f64"],
    ["run", TINY, "--csv", "/nonexistent/dir/x.csv"],
    ["run"],
    ["bogus"],
    ["layout", "--tag", "aBcd16", "--dims", "2,17,5,4"],
    ["layout", "--tag", "abcd", "--dims", "2,17,5"],
    ["layout", "--tag", "abcd", "--dims", "2,x,5,4"],
    ["layout", "--tag", "abcd", "--dims", "2,17,5,4", "--offset", "2,0,0,0"],
    ["layout", TINY, "--path", "nope"],
    ["trace", "ic3"],
    ["run", "mb1000ic512ih224oc512kh3ph1"],
])
def test_bad_input_exits_2_with_one_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_existing_csv_needs_force(tmp_path, capsys):
    out = tmp_path / "keep.csv"
    out.write_text("precious")
    assert main(["run", TINY, "--paths", "dense", "--budget-ms", "5", "--csv", str(out)]) == 2
    assert out.read_text() == "precious"
    assert main(["run", TINY, "--paths", "dense", "--budget-ms", "5", "--csv", str(out), "--force"]) == 0


def test_layout_tag_json(capsys):
    assert main(["layout", "--tag", "aBcd16b", "--dims", "2,17,5,4", "--offset", "1,16,2,3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["padded_dims"] == [2, 32, 5, 4] and d["offset"] == 1136 and d["alias"] == "nChw16c"
    assert d["strides"] == [640, 320, 64, 16] and d["nbytes"] == 5120


def test_layout_kind_with_a_descriptor_picks_the_tensors_shown(capsys):
    # cli.md's `layout DESC --path mkldnn --kind weight` was silently the same as without --kind
    d = "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1"
    assert main(["layout", d, "--path", "mkldnn", "--kind", "weight", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["tensors"]) == ["weight"]
    assert main(["layout", d, "--path", "mkldnn", "--kind", "data", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["tensors"]) == ["input", "output"]
    assert main(["layout", d, "--path", "mkldnn", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["tensors"]) == ["input", "output", "weight"]


def test_layout_of_a_path_reads_the_real_descriptor(capsys, f32_conv):
    assert main(["layout", "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1", "--path", "mkldnn", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    out = d["tensors"]["output"]
    assert d["path"] == "mkldnn" and out["source"] == "descriptor"
    # 2x17x5x4 f32 as oneDNN's verbose says this CPU writes it: with a channel block b, 17 channels pad to
    # Cp = ceil(17/b)*b (AVX-512: aBcd16b, Cp 32, 5120 bytes; AVX2: aBcd8b, Cp 24, 3840 bytes); plain on
    # SSE4.1's gemm kernel (abcd, 2720 bytes).
    b, cp = f32_conv.block, f32_conv.padded(17)
    assert out["tag"] == f32_conv.tag
    if b:
        assert out["alias"] == f"nChw{b}c" and out["inner_blks"] == [b] and out["inner_idxs"] == [1]
        assert out["strides"] == [cp * 5 * 4, 5 * 4 * b, 4 * b, b]
    else:
        assert out["inner_blks"] == [] and out["inner_idxs"] == []
    assert out["padded_dims"] == [2, cp, 5, 4]
    assert out["stored_bytes"] == out["nbytes"] == 2 * cp * 5 * 4 * 4 and out["logical_bytes"] == 2720
    assert out["overhead_pct"] == round(100 * (2 * cp * 5 * 4 * 4 - 2720) / 2720, 2)
    assert out["kernel_tag"] == out["tag"]  # the kernel wrote the output as it is stored


def test_trace_json_lists_primitives(capsys):
    assert main(["trace", "mb2ic17ih5oc17oh5kh3ph1", "--paths", "dense,native,mkldnn_roundtrip", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert any(p["op"] == "convolution" for p in d["paths"]["dense"])
    assert d["paths"]["native"] == []
    assert sum(p["op"] == "reorder" for p in d["paths"]["mkldnn_roundtrip"]) >= 1
    for p in d["paths"]["dense"]:
        assert {"op", "impl", "prop", "src", "wei", "dst", "problem", "time_ms"} <= set(p)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_python_dash_m_and_signals_keep_finished_rows(tmp_path, sig):
    out = tmp_path / "t.csv"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # Ctrl+C as in a terminal: a test runner started in the background (`cmd &` in a script) passes SIGINT
    # down ignored, and Python then keeps ignoring it, as it should.
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "run", TINY, "--budget-ms", "1500", "--csv", str(out)],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    # wait until the second path starts, i.e. one row is finished and on disk
    deadline = time.time() + 60
    for line in proc.stderr:
        if "[2/6]" in line or time.time() > deadline:
            break
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) >= 1 and all(r["status"] == "ok" for r in rows)


def test_asymmetric_pad_note_says_mkldnn_roundtrip_pads_every_call(capsys):
    """Issue 26 #4: `run` printed "MKLDNN paths get the input padded once" for mkldnn_roundtrip too, which pads
    on every call (core/paths/eager.py); it now prints the listing's sentence."""
    assert main(["run", "mb1ic8ih5oc8oh8kh3ph3", "--paths", "mkldnn_roundtrip", "--budget-ms", "5", "--no-trace"]) == 0
    err = capsys.readouterr().err
    assert "mkldnn_roundtrip: pads on every call" in err and "get the input padded once" not in err
