"""`--isa NAME`: the measuring process acts as a smaller CPU; every row's isa is read back from oneDNN there."""

import csv
import os
import re
import subprocess
import sys

import pytest

from explorer.cli import main
from explorer.core.measure import isa

TINY = "mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1"
HAVE = isa.available()
pytestmark = pytest.mark.skipif("sse41" not in HAVE, reason="not an x86-64 CPU with SSE4.1: no ISA to cap at")


def kernel_isa(impl: str) -> str:
    """The ISA a oneDNN implementation name carries ("jit:avx2" -> avx2, "brg_conv_fwd:avx512_core" ->
    avx512_core; "x64:gemm:jit" and "jit:uni" name none)."""
    m = re.search(r":((?:sse41|avx\w*))", impl)
    return m[1] if m else ""


def rows(path):
    return list(csv.DictReader(open(path)))


def test_run_isa_caps_the_kernels_and_reads_the_isa_back(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["run", TINY, "--isa", "sse41", "--paths", "dense,mkldnn", "--budget-ms", "5", "--csv", str(out)]) == 0
    assert "isa (read back from oneDNN): sse41" in capsys.readouterr().err
    for r in rows(out):
        assert r["status"] == "ok", r["error"]
        assert r["isa"] == "sse41" and r["aten_isa"] == "DEFAULT", (r["isa"], r["aten_isa"])
        assert kernel_isa(r["conv_impl"]) in ("", "sse41"), r["conv_impl"]  # no kernel above the cap


def test_isa_column_is_read_back_not_echoed(tmp_path):
    """No --isa: the row says what oneDNN in the measuring process reports, here capped from outside."""
    out = tmp_path / "r.csv"
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="SSE41")
    env.pop("MKLDNN_EXPLORER_IN_PROCESS", None)
    p = subprocess.run([sys.executable, "-m", "explorer", "run", TINY, "--paths", "mkldnn", "--budget-ms", "5",
                        "--csv", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert [r["isa"] for r in rows(out)] == ["sse41"]


def test_an_isa_above_this_cpu_exits_2_with_one_sentence(tmp_path):
    above = next((n for n in isa.ISAS if n not in HAVE), None)
    if above is None:
        pytest.skip("this CPU has every ISA oneDNN names: none to refuse")
    out = tmp_path / "r.csv"
    p = subprocess.run([sys.executable, "-m", "explorer", "run", TINY, "--isa", above, "--csv", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and above in line and ", ".join(HAVE) in line, line
    assert not out.exists()


def test_sweep_over_isa_writes_a_row_per_isa_with_its_own(tmp_path):
    top = HAVE[-1]
    out = tmp_path / "s.csv"
    assert main(["sweep", TINY, "--vary", f"isa=sse41,{top}", "--paths", "mkldnn", "--budget-ms", "5",
                 "--csv", str(out)]) == 0
    got = rows(out)
    assert [(r["vary"], r["isa"]) for r in got] == [("isa=sse41", "sse41"), (f"isa={top}", top)]
    assert all(r["status"] == "ok" for r in got), [r["error"] for r in got]
    assert kernel_isa(got[0]["conv_impl"]) in ("", "sse41")


def test_sweep_refuses_an_isa_this_cpu_lacks_before_any_point(tmp_path, capsys):
    above = next((n for n in isa.ISAS if n not in HAVE), None)
    if above is None:
        pytest.skip("this CPU has every ISA oneDNN names: none to refuse")
    out = tmp_path / "s.csv"
    assert main(["sweep", TINY, "--vary", f"isa=sse41,{above}", "--csv", str(out)]) == 2
    assert above in capsys.readouterr().err and not out.exists()


def test_in_process_measuring_refuses_an_isa(monkeypatch, capsys):
    monkeypatch.setenv("MKLDNN_EXPLORER_IN_PROCESS", "1")
    assert main(["run", TINY, "--isa", "sse41", "--paths", "dense", "--budget-ms", "5"]) == 2
    assert "measuring process" in capsys.readouterr().err


def test_model_isa_runs_every_layer_capped(tmp_path):
    out = tmp_path / "m.csv"
    fast = ["--paths", "dense,mkldnn", "--budget-ms", "5", "--mode-budget-ms", "10", "--no-trace", "--threads", "1"]
    assert main(["model", "tiny", "--isa", "sse41", "--csv", str(out), *fast]) == 0
    # every per-layer, per-path measurement (the rows with a Result behind them) ran capped, read back
    layer_rows = [r for r in rows(out) if r["kind"] == "layer_path"]
    assert layer_rows and {r["isa"] for r in layer_rows} == {"sse41"}
