"""The routes to oneDNN beside the six paths: jit_frozen, compiled, mkldnn_prepacked.

Each is checked for what the issue asks of it: a row ok (or unsupported with torch's reason), its output
against the f32 reference, its trace, its ATen chain, and whether the per-call weight reorder is gone.
torch.compile is slow on a 2-core machine: one small spec, compiled once (the module-level cache), @slow.
"""

import pytest
import torch

from explorer.core.jobs.options import RunOptions, expand_paths
from explorer.core.jobs.run import run
from explorer.core.paths import routes
from explorer.core.paths.base import ALL_PATHS, PATHS, ROUTES, Tensors, to_dense
from explorer.core.paths.registry import prepare
from explorer.core.problem.spec import parse_descriptor

SMALL = "mb1ic16ih10oc16oh10kh3ph1"


@pytest.fixture(scope="module")
def rows():
    spec = parse_descriptor(SMALL)
    res = run(spec, RunOptions(paths=("mkldnn", "jit_frozen", "mkldnn_prepacked"), budget_ms=10))
    return {r.path: r for r in res}


def test_route_names_are_accepted_but_not_in_the_default_set():
    assert set(ROUTES) <= set(ALL_PATHS) and not set(ROUTES) & set(PATHS)
    assert expand_paths("all") == PATHS
    assert expand_paths("routes") == ROUTES
    assert expand_paths("dense,routes,dense") == ("dense", *ROUTES)


def test_prepacked_output_matches_and_its_trace_has_no_reorder(rows):
    r = rows["mkldnn_prepacked"]
    assert r.status == "ok", r.error
    assert r.max_abs_err < 1e-4
    assert r.samples >= 5
    convs = [p for p in r.trace if p.op == "convolution"]
    assert convs, "the prepacked route must run a oneDNN convolution"
    # Packed for the real input shape, in channels_last as inductor does: the kernel reads the stored weight
    # and the input as they are, so no reorder runs per call.
    assert r.reorder_count == 0, [(p.op, p.src, p.dst) for p in r.trace]
    assert r.src_tag == "acdb" and r.dst_tag == "acdb"
    assert r.layouts["weight"].stored.tag == r.wei_tag
    assert convs[-1].prop == "forward_inference"
    assert r.aten_ops == "mkldnn::_convolution_pointwise"
    assert "_reorder_convolution_weight" in r.route_note


def test_mkldnn_module_weight_is_reordered_per_call_when_the_kernel_wants_another_format(rows):
    """The seed's route: the weight prepacked at conversion is reordered again in every call exactly when the
    kernel reads another format than the one stored (an AVX2 or AVX-512 direct kernel wants OIhw-blocked
    weights; SSE4.1's gemm kernel or AMX may read the stored one as it is). Read from this CPU's trace."""
    r = rows["mkldnn"]
    assert r.status == "ok", r.error
    assert r.wei_tag and r.layouts["weight"].stored.tag
    wei_reorders = [p for p in r.trace if p.op == "reorder" and p.dst == r.wei_tag]
    if r.layouts["weight"].stored.tag != r.wei_tag:
        assert wei_reorders, [(p.op, p.src, p.dst) for p in r.trace]
    else:
        assert not wei_reorders, [(p.op, p.src, p.dst) for p in r.trace]
    assert [p.prop for p in r.trace if p.op == "convolution"][-1] == "forward_training"


def test_jit_frozen_says_what_it_inserted(rows):
    r = rows["jit_frozen"]
    assert r.status == "ok", r.error
    assert r.max_abs_err < 1e-4
    assert "prim::mkldnn_convolution" in r.route_note and "aten::to_mkldnn" in r.route_note
    assert "aten::to_mkldnn" in r.aten_ops and "aten::to_dense" in r.aten_ops
    assert r.compile_ms is not None and r.compile_ms > 0
    assert any(p.op == "convolution" for p in r.trace)


def test_describe_inserted_counts_and_orders():
    kinds = ["aten::to_mkldnn", "prim::ConstantMKLDNNTensor", "prim::ConstantMKLDNNTensor",
             "prim::mkldnn_convolution", "aten::to_dense"]
    assert routes.describe_inserted(kinds) == ("optimize_for_inference inserted: aten::to_mkldnn, "
                                               "prim::ConstantMKLDNNTensor x2, prim::mkldnn_convolution, aten::to_dense")
    assert "no MKLDNN node" in routes.describe_inserted(["aten::conv2d"])


def test_compiled_calls_reads_inductors_wrapper():
    src = ("def call(self, args):\n    arg0_1, = args\n    cpp_fused_convolution_0(arg0_1, buf0)\n"
           "    buf1 = torch.ops.mkldnn._convolution_pointwise.default(buf0, p, b, [1, 1], [1, 1], [1, 1], 1, 'none', [None], '')\n"
           "    buf2 = buf1\n    cpp_fused_1(buf2, buf3)\n    return (buf3, )\n\ndef get_args():\n    cpp_fused_x(a)\n")
    assert routes.compiled_calls(src) == ["cpp_fused_convolution_0", "torch.ops.mkldnn._convolution_pointwise.default",
                                          "cpp_fused_1"]


def test_compiled_without_a_cxx_compiler_is_unsupported_with_inductors_sentence():
    import torch._inductor.config as ic

    with ic.patch({"cpp.cxx": ("/nonexistent/bin/c++-for-test",)}):
        res = run(parse_descriptor("mb1ic4ih6oc4oh6kh3ph1"), RunOptions(paths=("compiled",), budget_ms=5))
    assert res[0].status == "unsupported"
    assert res[0].error.startswith("torch.compile needs a C++ compiler: ")
    assert "No working C++ compiler" in res[0].error or "not found" in res[0].error


@pytest.mark.slow
def test_compiled_route_compiles_once_and_runs_the_prepacked_op():
    from explorer.core.paths.routes import cxx_problem

    if cxx_problem():
        pytest.skip(f"no C++ compiler here: {cxx_problem()}")
    spec = parse_descriptor("mb1ic8ih8oc8oh8kh3ph1")
    res = run(spec, RunOptions(paths=("compiled",), budget_ms=10))[0]
    assert res.status == "ok", res.error
    assert res.max_abs_err < 1e-4
    assert res.compile_ms is not None and res.compile_ms > 0
    assert "_convolution_pointwise" in res.route_note
    assert "mkldnn::_convolution_pointwise" in res.aten_ops and "Torch-Compiled Region" in res.aten_ops
    assert [p.prop for p in res.trace if p.op == "convolution"] == ["forward_inference"]
    assert res.reorder_count == 0
    # A second run of the same spec reuses the compiled module: the same compile time, no new compile.
    t = Tensors.make(spec)
    with torch.no_grad():
        again = prepare("compiled", t)
        assert again.compile_ms == res.compile_ms
        assert torch.allclose(to_dense(again.call_once()), t.reference(), atol=1e-4)
