"""The fresh script of a row (explorer.core.process.verify.script_text) computes the tool's own problem: the same
seeded tensors, padding, groups, dtype and statement, for 1-D/2-D/3-D, asymmetric pads and every eager path."""

from __future__ import annotations

import ast

import pytest
import torch

from explorer.core.paths.base import Tensors, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor
from explorer.core.process import verify
from explorer.core.report.results import Result

CASES = [
    ("mb2ic8ih6oc8oh6kh3ph1", "dense", "f32"),
    ("g2mb1ic8ih7oc4oh4kh3sh2ph1", "channels_last", "f32"),
    ("mb1ic4ih5oc4oh8kh3ph3", "dense", "f32"),  # asymmetric: F.pad plus the conv
    ("mb1ic4ih5oc4oh8kh3ph3", "mkldnn", "f32"),
    ("mb1ic4iw9oc4ow9kw3pw1", "native", "f32"),  # 1-D
    ("mb1ic4id4oc4od4kd3pd1", "mkldnn_functional", "f32"),  # 3-D
    ("mb1ic8ih6oc8oh6kh3ph1", "mkldnn_roundtrip", "bf16"),
]


@pytest.mark.parametrize("desc,path,dtype", CASES)
def test_the_script_computes_the_rows_problem(desc, path, dtype):
    spec = parse_descriptor(desc, dtype=dtype)
    tensors = Tensors.make(spec)
    try:
        want = to_dense(prepare(path, tensors).call_once()).float()
    except Exception as exc:  # noqa: BLE001 - a path this CPU refuses has no row to check
        pytest.skip(f"{path} {dtype} does not run here: {exc}")
    res = Result(spec=spec, path=path, threads=1, median_ms=0.1, allocator="tuned")
    text = verify.script_text(res, min_run_time=0.001)
    assert text.startswith(verify.MARKER) and "explorer" not in text.split("\n", 3)[-1]
    setup, timed = text.split("t = tb.Timer(stmt=", 1)
    stmt = ast.literal_eval(timed.split(", globals=", 1)[0])
    g: dict = {}
    grad, threads, mkldnn = torch.is_grad_enabled(), torch.get_num_threads(), torch.backends.mkldnn.enabled
    try:
        exec(compile(setup, "verify-script", "exec"), g)  # noqa: S102 - the script up to its Timer
        got = to_dense(eval(stmt, g)).float()  # noqa: S307 - the statement the Timer times
    finally:
        torch.set_grad_enabled(grad)
        torch.set_num_threads(threads)
        torch.backends.mkldnn.enabled = mkldnn
    assert got.shape == want.shape
    assert torch.allclose(got, want, atol=1e-2 if dtype == "bf16" else 1e-5)


def test_only_what_it_can_check():
    spec = parse_descriptor("mb1ic8ih6oc8oh6kh3ph1")
    assert "no fresh-script check for compiled" in verify.verifiable(Result(spec=spec, path="compiled", threads=1, median_ms=1.0))
    assert verify.verifiable(Result(spec=spec, path="dense", threads=1, status="error")) == "the row has no median to check"
    assert verify.verifiable(Result(spec=spec, path="dense", threads=1, median_ms=1.0)) == ""


def test_judge_marks_beyond_ten_percent(tmp_path):
    spec = parse_descriptor("mb1ic8ih6oc8oh6kh3ph1")
    res = Result(spec=spec, path="dense", threads=1, median_ms=1.0, allocator="tuned")
    assert verify.judge(res, tmp_path / "s.py", verify.ScriptFigure(1.05)).note == ""
    v = verify.judge(res, tmp_path / "s.py", verify.ScriptFigure(1.2))
    assert not v.reproduced and v.note == "not reproduced in a fresh script: the row 1 ms, the script 1.2 ms (0.83x)"
