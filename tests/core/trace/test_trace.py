"""Tests for explorer.core.trace.onednn: verbose parsing (fixtures) and live fd-1 capture."""

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from explorer.core.errors import InputError
from explorer.core.trace import onednn as T

DATA = Path(__file__).parent / "data"
V312 = (DATA / "verbose_v312.txt").read_text()
OLD = (DATA / "verbose_old.txt").read_text()

CONV_V3 = (
    "onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx512_core,forward_training,"
    "src:f32:ap:blocked:aBcd16b::f0 wei:f32:ap:blocked:ABcd16b16a::f0 bia:undef::undef::: "
    "dst:f32:ap:blocked:aBcd16b::f0,attr-scratchpad:user,alg:convolution_direct,"
    "mb2_ic17oc17_ih5oh5kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1,0.0219727"
)
CONV_OLD = (
    "dnnl_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,"
    "src_f32::blocked:aBcd16b:f0 wei_f32::blocked:ABcd16b16a:f0 bia_f32::blocked:a:f0 "
    "dst_f32::blocked:aBcd16b:f0,,alg:convolution_direct,"
    "mb2_ic17oc17_ih5oh5kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1,0.0219727"
)


# --------------------------------------------------------------------------- parse_line


def test_parse_v3_exec_line():
    p = T.parse_line(CONV_V3)
    assert isinstance(p, T.Primitive)
    assert (p.kind, p.op, p.engine, p.impl, p.prop) == (
        "exec", "convolution", "cpu", "jit:avx512_core", "forward_training")
    assert (p.src, p.wei, p.dst, p.bia) == ("aBcd16b", "ABcd16b16a", "aBcd16b", None)
    assert p.args["src"] == T.MemArg("f32", "ap", "blocked", "aBcd16b", "", "f0")
    assert p.args["src"].padded and p.args["bia"].dt == "undef"
    assert p.attrs == "attr-scratchpad:user" and p.alg == "convolution_direct"
    assert p.problem.startswith("mb2_ic17oc17") and p.time_ms == pytest.approx(0.0219727)
    assert p.raw == CONV_V3


def test_parse_old_spelling_matches_v3():
    old, new = T.parse_line(CONV_OLD), T.parse_line(CONV_V3)
    assert isinstance(old, T.Primitive)
    for key in ("op", "impl", "prop", "src", "wei", "dst", "src_dt", "problem", "time_ms"):
        assert old.to_dict()[key] == new.to_dict()[key], key
    assert old.bia == "a" and old.attrs == "" and old.alg == "convolution_direct"


def test_to_dict_keys_and_dtypes():
    d = T.parse_line(CONV_V3).to_dict()
    for key in ("op", "impl", "prop", "src", "wei", "dst", "problem", "time_ms",
                "src_dt", "wei_dt", "dst_dt"):
        assert key in d
    assert d["src_dt"] == "f32" and d["wei"] == "ABcd16b16a"


def test_reorder_has_src_and_dst_only():
    line = ("onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcd::f0 "
            "dst:f32:p:blocked:aBcd16b::f0,attr-scratchpad:user,,2x17x5x4,5.06592")
    d = T.parse_line(line).to_dict()
    assert (d["op"], d["src"], d["dst"], d["wei"], d["problem"]) == (
        "reorder", "abcd", "aBcd16b", None, "2x17x5x4")


@pytest.mark.parametrize("prefix", [
    "onednn_verbose,1629385233156.189941,",  # 2.x with timestamp
    "onednn_verbose,v1,1629385233156.189941,primitive,",  # 3.x with timestamp
    "mkldnn_verbose,",
])
def test_header_variants(prefix):
    p = T.parse_line(prefix + CONV_OLD.split(",", 1)[1])
    assert p.op == "convolution" and p.src == "aBcd16b"


def test_timestamp_kept():
    line = next(ln for ln in OLD.splitlines() if ln.startswith("onednn_verbose,1629"))
    p = T.parse_line(line)
    assert p.timestamp == pytest.approx(1629385233156.19)
    assert (p.src, p.wei, p.args["src"].dt, p.attrs) == ("acdb", "Acdb16a", "bf16", "attr-post-ops:eltwise_relu")


def test_create_lines():
    miss = T.parse_line(CONV_V3.replace(",exec,", ",create:cache_miss,"))
    hit = T.parse_line(CONV_V3.replace(",exec,", ",create:cache_hit,"))
    plain = T.parse_line(CONV_OLD.replace(",exec,", ",create,"))
    assert (miss.kind, miss.cache, hit.cache, plain.kind, plain.cache) == (
        "create", "miss", "hit", "create", None)


def test_info_lines_parse_as_info():
    rec = T.parse_line("onednn_verbose,v1,info,cpu,runtime:OpenMP,nthr:2")
    assert isinstance(rec, T.InfoLine) and rec.text == "cpu,runtime:OpenMP,nthr:2"
    tmpl = T.parse_line("onednn_verbose,v1,primitive,info,template:operation,engine,primitive")
    assert isinstance(tmpl, T.InfoLine) and tmpl.api == "primitive"


@pytest.mark.parametrize("line", [
    "",
    "hello world",
    "random garbage,with,commas,1.0",
    "onednn_verbose",
    "onednn_verbose,v1,primitive,exec,cpu,convolution",  # truncated
    "onednn_verbose,v1,primitive,error,cpu,convolution,could not create",
    "onednn_verbose,v1,graph,info,template:operation,engine,partition_id",
    "onednn_verbose,v1,primitive,create:dispatch,convolution,cpu,x64:gemm:jit,skipping,,,,1",
    CONV_V3.rsplit(",", 1)[0] + ",not-a-time",
    "xonednn_verbose,v1,primitive,exec",
])
def test_junk_and_unknown_shapes_are_none(line):
    assert T.parse_line(line) is None


def test_mkldnn_0x_memory_spelling():
    p = T.parse_line("mkldnn_verbose,exec,reorder,jit:uni,undef,in:f32_nchw out:f32_nChw16c,num:1,2x17x5x4,0.015625")
    assert p.engine is None and p.args["out"] == T.MemArg("f32", tag="nChw16c")
    assert p.aux == "num:1" and p.problem == "2x17x5x4"


def test_verbose_line_glued_to_other_output():
    text = "no newline at end" + CONV_V3 + "\n"
    trace = T.parse_trace(text)
    assert trace.other_lines == ["no newline at end"]
    assert [p.op for p in trace.primitives] == ["convolution"]


# --------------------------------------------------------------------------- fixtures


def test_v312_fixture():
    prims = T.parse_verbose(V312)
    assert len(prims) == 40
    trace = T.parse_trace(V312)
    assert len(trace.primitives) == 20 and len(trace.creates) == 20
    assert all(p.kind == "exec" for p in trace.primitives)
    assert {p.op for p in trace.primitives} == {"convolution", "reorder"}
    impls = [p.impl for p in trace.primitives if p.op == "convolution"]
    assert impls == ["jit:avx512_core", "brg_conv_fwd:avx512_core", "jit_bf16:avx512_core_bf16", "jit:avx512_core"]
    bf16 = [p for p in trace.primitives if p.op == "convolution"][2]
    assert (bf16.to_dict()["src_dt"], bf16.wei) == ("bf16", "ABcd8b16a2b")
    cl = [p for p in trace.primitives if p.op == "convolution"][1]
    assert (cl.src, cl.wei, cl.dst) == ("acdb", "Acdb32a", "acdb")


def test_v312_fixture_other_lines_and_info():
    trace = T.parse_trace(V312)
    assert "app print: hello from the explorer" in trace.other_lines
    assert "random garbage,with,commas,1.0" in trace.other_lines
    assert "### dense" in trace.other_lines
    assert not any(ln.startswith("onednn_verbose") for ln in trace.other_lines)
    assert trace.info == {
        "version": "3.12.0",
        "commit": "80afa71049cd69a3df32adcccb623b12cd7baa22",
        "runtime": "OpenMP",
        "nthr": 2,
        "isa": "Intel AVX-512 with Intel DL Boost and bfloat16 support",
    }


def test_v312_fixture_summary():
    s = T.parse_trace(V312).summary
    assert (s.conv_count, s.reorder_count) == (4, 16)
    assert s.conv_time_ms == pytest.approx(0.065918)
    assert s.reorder_time_ms == pytest.approx(0.39599595)
    assert s.other_time_ms == 0.0
    assert (s.conv_impl, s.src_tag, s.wei_tag, s.dst_tag) == (
        "jit:avx512_core", "aBcd16b", "ABcd16b16a", "aBcd16b")


def test_old_fixture():
    trace = T.parse_trace(OLD)
    assert [p.op for p in trace.primitives] == [
        "reorder", "reorder", "convolution", "eltwise", "reorder", "convolution", "reorder"]
    assert len(trace.creates) == 1 and trace.creates[0].cache == "miss"
    assert trace.other_lines == ["Epoch 1 loss 0.25", "Epoch 2 loss 0.125"]
    assert trace.primitives[3].alg == "eltwise_relu"


def test_old_fixture_info_isa_with_commas():
    info = T.parse_info(OLD)
    assert info["version"] == "2.7.3" and info["runtime"] == "OpenMP" and info["nthr"] == 4
    assert info["isa"] == "Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions"


def test_old_fixture_summary_exact():
    s = T.parse_trace(OLD).summary
    assert s.conv_time_ms == pytest.approx(0.0219727 + 0.5)
    assert s.reorder_time_ms == pytest.approx(0.25 + 0.125 + 0.03125 + 0.015625)
    assert s.other_time_ms == pytest.approx(0.0625)
    assert s.reorder_count == 4 and s.conv_count == 2
    # the LAST convolution names the impl and tags
    assert (s.conv_impl, s.src_tag, s.wei_tag, s.dst_tag) == (
        "brg_conv_fwd:avx512_core_amx", "acdb", "Acdb16a", "acdb")
    d = s.to_dict()
    assert d["total_time_ms"] == pytest.approx(s.conv_time_ms + s.reorder_time_ms + s.other_time_ms)
    assert set(d) >= {"conv_time_ms", "reorder_time_ms", "other_time_ms", "reorder_count",
                      "conv_impl", "src_tag", "wei_tag", "dst_tag"}


def test_summary_ignores_create_lines():
    prims = [T.parse_line(CONV_V3), T.parse_line(CONV_V3.replace(",exec,", ",create:cache_miss,"))]
    s = T.TraceSummary.from_primitives(prims)
    assert s.conv_count == 1 and s.conv_time_ms == pytest.approx(0.0219727)


def test_empty_summary():
    s = T.TraceSummary.from_primitives([])
    assert s.to_dict()["conv_impl"] is None and s.total_time_ms == 0.0


# --------------------------------------------------------------------------- capture


def _fd1_identity():
    st = os.fstat(1)
    return st.st_dev, st.st_ino


def _c_write(text):
    os.write(1, text.encode())


def test_capture_returns_result_and_text():
    result, text = T.capture_fd_output(lambda a, b=0: (_c_write("from fd\n"), a + b)[1], 2, b=3)
    assert result == 5 and text == "from fd\n"


def test_capture_restores_fd1_when_fn_raises():
    before = _fd1_identity()

    def boom():
        _c_write("partial\n")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        T.capture_fd_output(boom)
    assert _fd1_identity() == before


def test_capture_large_output_does_not_deadlock():
    chunk = "x" * 1023 + "\n"
    _, text = T.capture_fd_output(lambda: [_c_write(chunk) for _ in range(1024)])
    assert len(text) == 1024 * 1024


def test_capture_from_worker_thread():
    out = {}

    def work():
        out["r"] = T.capture_fd_output(lambda: (_c_write("worker\n"), 7)[1])

    t = threading.Thread(target=work)
    t.start()
    t.join(30)
    assert out["r"] == (7, "worker\n")


def test_concurrent_captures_are_serialised():
    spans, results = [], {}

    def fn(tag):
        start = time.monotonic()
        for _ in range(5):
            _c_write(f"{tag}\n")
            time.sleep(0.01)
        spans.append((start, time.monotonic()))
        return tag

    def work(tag):
        results[tag] = T.capture_fd_output(fn, tag)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for tag, (res, text) in results.items():
        assert res == tag and text == f"{tag}\n" * 5  # nobody else's output leaked in
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_nested_capture_does_not_deadlock():
    def outer():
        _c_write("outer\n")
        _, inner = T.capture_fd_output(_c_write, "inner\n")
        return inner

    inner, text = T.capture_fd_output(outer)
    assert (inner, text) == ("inner\n", "outer\n")


def test_output_outside_window_reaches_real_stdout(capfd):
    _c_write("before\n")
    _, text = T.capture_fd_output(_c_write, "inside\n")
    _c_write("after\n")
    out = capfd.readouterr().out
    assert text == "inside\n"
    assert "before\n" in out and "after\n" in out and "inside" not in out


def test_python_prints_are_flushed_around_capture_subprocess():
    # A real process whose stdout is a pipe (block-buffered): ordering must survive.
    script = textwrap.dedent("""
        import os
        from explorer.core.trace.onednn import capture_fd_output
        print("py-before")
        _, text = capture_fd_output(lambda: (print("py-inside"), os.write(1, b"c-inside\\n")))
        print("py-after")
        print("CAPTURED=" + repr(text))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.splitlines() == ["py-before", "py-after", "CAPTURED='py-inside\\nc-inside\\n'"]


# --------------------------------------------------------------------------- run_traced (live)

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark_mkldnn = pytest.mark.skipif(not torch.backends.mkldnn.is_available(), reason="no oneDNN")


def _conv_inputs():
    g = torch.Generator().manual_seed(0)
    return torch.randn(2, 17, 5, 4, generator=g), torch.randn(17, 17, 3, 3, generator=g)


@pytestmark_mkldnn
def test_run_traced_dense_conv():
    x, w = _conv_inputs()
    trace = T.run_traced(lambda: F.conv2d(x, w, padding=1))
    assert trace.result.shape == (2, 17, 5, 4)
    convs = [p for p in trace.primitives if p.op == "convolution"]
    assert len(convs) == 1
    conv = convs[0]
    assert conv.kind == "exec" and conv.prop.startswith("forward") and conv.impl
    assert conv.problem == "mb2_ic17oc17_ih5oh5kh3sh1dh0ph1_iw4ow4kw3sw1dw0pw1"
    assert conv.args["src"].dt == "f32" and conv.time_ms >= 0
    s = trace.summary
    assert s.conv_count == 1 and s.conv_impl == conv.impl and s.src_tag == conv.src
    # Dense NCHW in, dense NCHW out: if oneDNN picked a blocked layout, reorders bracket the conv.
    if conv.src != "abcd":
        reorders = [p for p in trace.primitives if p.op == "reorder"]
        assert any(r.src == "abcd" and r.dst == conv.src for r in reorders)
        assert any(r.src == conv.dst and r.dst == "abcd" for r in reorders)
        assert s.reorder_count == len(reorders) >= 2
    assert "version" in trace.info  # remembered even when oneDNN printed it earlier


@pytestmark_mkldnn
def test_run_traced_twice_keeps_info_and_is_quiet_after():
    x, w = _conv_inputs()
    first = T.run_traced(lambda: F.conv2d(x, w, padding=1))
    second = T.run_traced(lambda: F.conv2d(x, w, padding=1))
    assert second.info == first.info and second.summary.conv_count == 1
    # verbose is switched off after the call
    _, text = T.capture_fd_output(lambda: F.conv2d(x, w, padding=1))
    assert "onednn_verbose" not in text


@pytestmark_mkldnn
def test_run_traced_with_context_disabling_mkldnn():
    x, w = _conv_inputs()
    trace = T.run_traced(lambda: F.conv2d(x, w, padding=1),
                         context=torch.backends.mkldnn.flags(enabled=False))
    assert trace.summary.conv_count == 0 and trace.result.shape == (2, 17, 5, 4)


@pytestmark_mkldnn
def test_run_traced_creation_level_and_other_lines():
    x, w = _conv_inputs()

    def fn():
        _c_write("app says hi\n")  # non-oneDNN output inside the window
        return F.conv2d(x, w, padding=1)

    trace = T.run_traced(fn, level=torch.backends.mkldnn.VERBOSE_ON_CREATION)
    assert any(c.op == "convolution" for c in trace.creates)
    assert all(c.kind == "create" and c.cache in ("hit", "miss") for c in trace.creates)
    assert trace.other_lines == ["app says hi"]


def test_run_traced_rejects_bad_arguments():
    with pytest.raises(InputError):
        T.run_traced(42)
    with pytest.raises(InputError) as err:
        T.run_traced(lambda: None, context=object())
    assert err.value.field == "context"


@pytestmark_mkldnn
def test_run_traced_restores_fd_and_verbose_when_fn_raises():
    before = _fd1_identity()
    with pytest.raises(ValueError):
        T.run_traced(lambda: (_ for _ in ()).throw(ValueError("bad")))
    assert _fd1_identity() == before
    x, w = _conv_inputs()
    _, text = T.capture_fd_output(lambda: F.conv2d(x, w, padding=1))
    assert "onednn_verbose" not in text


def test_core_trace_does_not_import_qt():
    code = ("import sys, explorer.core.trace.onednn; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PyQt5','PyQt6','PySide6','PySide2','pyqtgraph')]; "
            "assert not bad, bad; assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
