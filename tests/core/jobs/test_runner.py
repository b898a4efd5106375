"""Every path on a tiny spec: ok, outputs agree with the f32 reference, bytes as stored, unsupported rows."""

import pytest
import torch

from explorer.core.errors import InputError, SpecError
from explorer.core.jobs.events import PathFinished
from explorer.core.jobs.options import RunOptions
from explorer.core.jobs.run import iter_run, run
from explorer.core.measure import machine
from explorer.core.paths.base import PATHS, Tensors, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.memory import check_memory, estimate_bytes
from explorer.core.problem.spec import parse_descriptor

TINY = "mb2ic16ih14oc16oh14kh3ph1"


@pytest.fixture(scope="module")
def tiny_results():
    return run(parse_descriptor(TINY), RunOptions(budget_ms=10))


def test_all_six_paths_ok(tiny_results):
    assert [r.path for r in tiny_results] == list(PATHS)
    for r in tiny_results:
        assert r.status == "ok", (r.path, r.error)
        assert r.samples >= 5 and r.median_ms > 0 and r.iqr_ms >= 0
        assert r.max_abs_err < 1e-4
        spec = r.spec
        assert r.gflops == pytest.approx(spec.ops / (r.median_ms / 1e3) / 1e9)
        assert len(r.samples_ms) == r.samples


def test_outputs_agree_between_paths():
    t = Tensors.make(parse_descriptor("g2mb1ic6ih9iw7oc4kh3kw2sh2ph1dh1"))
    ref = t.reference()
    for name in PATHS:
        out = to_dense(prepare(name, t).call_once())
        assert out.shape == ref.shape
        assert torch.allclose(out, ref, atol=1e-4), name


def test_stored_bytes_show_mkldnn_padding(tiny_results, f32_conv):
    spec = parse_descriptor("mb2ic17ih5iw4oc17oh5ow4kh3kw3ph1pw1")
    rows = {r.path: r for r in run(spec, RunOptions(paths=("dense", "mkldnn"), budget_ms=5))}
    assert rows["dense"].output_bytes == 2 * 17 * 5 * 4 * 4  # 2720: plain NCHW
    # the format oneDNN's verbose says this CPU writes: blocked channels padded to the block (5120 bytes with
    # AVX-512's 16, Cp 32; 3840 with AVX2's 8, Cp 24) or plain (2720 with SSE4.1's gemm kernel)
    cp = f32_conv.padded(17)
    assert rows["mkldnn"].output_bytes == 2 * cp * 5 * 4 * 4
    assert rows["mkldnn"].dst_tag == f32_conv.tag and rows["mkldnn"].conv_impl == f32_conv.impl


def test_trace_columns_filled_for_onednn_paths(tiny_results):
    by = {r.path: r for r in tiny_results}
    assert by["mkldnn"].conv_impl and by["mkldnn"].src_tag and by["mkldnn"].dst_tag
    assert by["native"].conv_impl == "" and by["native"].reorder_count == 0
    assert by["mkldnn_roundtrip"].reorder_count >= 1


def test_bf16_functional_is_unsupported_with_torchs_reason():
    rows = {r.path: r for r in run(parse_descriptor(TINY, dtype="bf16"), RunOptions(budget_ms=5))}
    # An MKLDNN input with a dense weight: torch refuses it for bf16 on every CPU.
    assert rows["mkldnn_functional"].status == "unsupported"
    assert "should be the same" in rows["mkldnn_functional"].error
    # The strided paths run everywhere (PyTorch's own bf16 kernels where oneDNN has no bf16).
    for p in ("dense", "channels_last", "native"):
        assert rows[p].status == "ok", (p, rows[p].error)
        assert rows[p].max_abs_err < 0.05  # bf16 rounding of the accumulation vs the f32 reference
    module_paths = ("mkldnn", "mkldnn_roundtrip")  # torch.utils.mkldnn.to_mkldnn(module, torch.bfloat16)
    if machine.bf16_supported():
        for p in module_paths:
            assert rows[p].status == "ok", (p, rows[p].error)
            assert rows[p].max_abs_err < 0.05
    else:
        # No bf16 in oneDNN on this CPU: torch refuses to prepack the weight. The row says so with
        # torch's own one-line reason (it names the missing CPU features) and holds no timings.
        for p in module_paths:
            r = rows[p]
            assert r.status == "unsupported", (p, r.status, r.error)
            assert "needs the cpu support" in r.error and "\n" not in r.error
            assert r.samples == 0 and r.median_ms is None


def test_events_in_order_and_cancel_keeps_finished_rows():
    seen = []
    finished = []

    def cancel():
        return len(finished) >= 2

    for ev in iter_run(parse_descriptor(TINY), RunOptions(budget_ms=50), cancel=cancel):
        seen.append(type(ev).__name__)
        if isinstance(ev, PathFinished):
            finished.append(ev.result)
    assert seen[0] == "PathStarted" and "Samples" in seen
    assert len(finished) == 2 and all(r.status == "ok" for r in finished)


def test_threads_are_applied_and_restored():
    before = torch.get_num_threads()
    rows = run(parse_descriptor(TINY), RunOptions(paths=("dense",), threads=1, budget_ms=5))
    assert rows[0].threads == 1
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("opts, field", [
    (RunOptions(paths=("nope",)), "paths"),
    (RunOptions(paths=()), "paths"),
    (RunOptions(threads=0), "threads"),
    (RunOptions(threads=10_000), "threads"),
    (RunOptions(budget_ms=0), "budget_ms"),
])
def test_bad_options_refused_before_work(opts, field):
    with pytest.raises(InputError) as e:
        next(iter_run(parse_descriptor(TINY), opts))
    assert e.value.field == field


def test_memory_guard_names_both_numbers():
    spec = parse_descriptor("mb64ic256ih224oc256kh3ph1")
    need = estimate_bytes(spec, PATHS)
    with pytest.raises(SpecError, match=r"needs about .*, more than the .* a run may take \(50% of the .* available now\)"):
        check_memory(spec, PATHS, available=need)  # half of it is the limit
    assert check_memory(spec, PATHS, available=4 * need) == need
