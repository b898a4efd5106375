"""jit_mkldnn's prediction parts, cut from its own frozen graph with TorchScript's Graph API.

torch.jit.optimize_for_inference runs a graph of its own: BatchNorm folded into the convs, each conv a
prim::mkldnn_convolution on blocked tensors, ReLU6 as prim::MKLDNNHardTanh_, and the interpreter between the
nodes, with no Python. Eager stand-ins for its parts (the to_mkldnn model's convs in order, the to_mkldnn
model with BN folded and its convs stubbed) pay Python on every module and conv call, which the graph does
not: paired against the forward (bench_model_order.py, BENCHMARKS §8b) they summed to 1.05x a tiny model's,
1.40x MobileNetV2 mb1's and 1.09x ResNet-50 mb1's (conversions left out); the graph's own parts to 0.80x,
1.28x and 1.02x. So the parts are taken from the graph itself:
- the convs: one graph holding every conv node of the frozen graph, in its order, each reading its own
  input (the real one, from one forward), run in one call;
- the remainder: the frozen graph without its conv and conversion (to_mkldnn/to_dense) nodes, their
  outputs turned into graph inputs fed real outputs of that forward, one buffer per kind (below; the
  stubbed model of the eager modes, in the graph's own terms). The conversions are timed apart, as for the
  other modes.

Inside the graph each node reads what the node before it has just written, from the caches; a part fed
captured tensors reads them from memory. On MobileNetV2, whose depthwise and 1x1 convs are bound by memory,
that alone put the parts at 1.20-1.28x the forward (ResNet-50, bound by compute: 1.02-1.03x). So each part
reads its inputs hot, as in the graph: every fed tensor is touched just before its first use, and a graph of
the same touches alone, timed beside it, is subtracted. Paired against the forward (bench_model_order.py
--mode jit_mkldnn, BENCHMARKS §8a, conversions left out): MobileNetV2 mb1 0.96x, ResNet-50 mb1 0.99x, tiny
0.73x (with its conversions, ~0.9x).

The conv pass's touch is an in-place no-op hardtanh (it reads and writes its input). The remainder's is a
restore: the graph hands its few freed buffers back to the next node, so the forward works in a few buffers
that stay in the caches, where 158 captured outputs (RepViT mb8: 227 MiB) each touched in turn pushed the
remainder's own buffers out of them, and its adds and GELUs read 1.1-4x their time in the forward (the part
1.11-1.15x). So the remainder is fed one buffer per kind of output (shape, dtype and layout), and each fed
value is restored from a real output of its kind (a copy_ from a pristine copy) just before its first use: the
footprint of the forward, and values that its in-place adds cannot drift from one call to the next (BENCHMARKS
§19).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

CONV_KINDS = ("prim::mkldnn_convolution", "aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::_convolution",
              "aten::convolution")
CONVERSION_KINDS = ("aten::to_mkldnn", "aten::to_dense")
_CONSTANT_KINDS = ("prim::Constant", "prim::ConstantMKLDNNTensor", "prim::ListConstruct")


@dataclass
class GraphParts:
    convs: Callable[[], object]  # every conv node of the graph, in its order, on its real input (touched): one call
    conv_touches: Callable[[], object]  # the touches of those inputs alone: subtracted from convs
    remainder: Callable[[], object]  # the graph without its conv and conversion nodes, fed their outputs (restored)
    remainder_touches: Callable[[], object]  # the restores of those outputs alone: subtracted from remainder
    n_convs: int
    conversions_twice: Callable[[], object] | None = None  # the graph with each conversion run twice; None: it has none
    n_conversions: int = 0
    n_fed: int = 0  # values the remainder is fed (the cut nodes' outputs it reads)
    n_buffers: int = 0  # the buffers they are fed in: one per kind (shape, dtype, layout), as in the forward


def _cut(graph) -> list:
    return [n for n in graph.nodes() if n.kind() in CONV_KINDS + CONVERSION_KINDS]


def _function(graph, name: str):
    """A ScriptFunction of a frozen module's graph, whose `self` input is unused once every attribute is a constant."""
    import torch

    first = next(iter(graph.inputs()), None)
    if first is not None and first.debugName().startswith("self") and not first.uses():
        graph.eraseInput(0)
    return torch._C._create_function_from_graph(name, graph)


def _tuple_of(graph, values: list):
    import torch

    node = graph.create("prim::TupleConstruct", values)
    node.output().setType(torch._C.TupleType([v.type() for v in values]))
    return node


# An in-place hardtanh with bounds no value reaches: it reads and writes every element, changing none.
_NO_BOUND = 3.0e38  # under float32's and bfloat16's largest finite value


def _touch(graph, value, blocked: bool):
    """Insert, at the graph's insert point, a node touching `value` in place, and return it: MKLDNN's own
    eltwise for a blocked tensor, aten's for a plain one."""
    import torch

    if blocked:
        node = graph.create("prim::MKLDNNHardTanh_", [value])
        node.f_("min_val", -_NO_BOUND)
        node.f_("max_val", _NO_BOUND)
    else:
        lo, hi = (graph.insertConstant(v) for v in (-_NO_BOUND, _NO_BOUND))
        node = graph.create("aten::hardtanh_", [value, lo, hi])
    node.output().setType(torch._C.TensorType.get())
    return graph.insertNode(node)


def _touchable(t) -> bool:
    """An in-place touch is refused where elements share memory (an expanded view fed straight to a dense
    conv): such a tensor is left cold. A view with gaps between its elements (a strided slice) is touched."""
    import torch

    return t.is_mkldnn or torch._debug_has_internal_overlap(t) != 1  # 1: they do share memory; 2: too hard to tell


def _kept_live(graph, value):
    """Insert, at the insert point, a read of `value` that the optimizer cannot fold (whether it is an MKLDNN
    tensor: a tensor type does not carry its layout) and return its output. A conv whose output nobody reads is
    dead code, and one whose rank (aten::dim) is read is too, once the profiling executor knows the shapes."""
    import torch

    node = graph.insertNode(graph.create("prim::is_mkldnn", [value]))
    node.output().setType(torch._C.BoolType.get())
    return node.output()


def _returning(graph, flags: list) -> None:
    graph.registerOutput(graph.insertNode(_tuple_of(graph, flags)).output())


def _touches(tensors: list):
    """One graph touching each tensor in turn, alone: what the touches cost inside a touched part."""
    import torch

    g = torch._C.Graph()
    flags = []
    for t in tensors:
        v = g.addInput()
        v.setType(torch._C.TensorType.get())
        flags.append(_kept_live(g, _touch(g, v, t.is_mkldnn).output()))
    _returning(g, flags)
    fn = torch._C._create_function_from_graph("touches", g)
    return lambda: fn(*tensors)


def _restore(graph, value, pristine):
    """Insert, at the insert point, a copy of `pristine` into `value` (in place) and return the node."""
    import torch

    node = graph.create("aten::copy_", [value, pristine, graph.insertConstant(False)])
    node.output().setType(torch._C.TensorType.get())
    return graph.insertNode(node)


def _restores(pairs: list):
    """One graph of the remainder's restores alone, in its order: what they cost inside it."""
    import torch

    g = torch._C.Graph()
    flags, feeds = [], []
    for buf, pristine in pairs:
        v, p = g.addInput(), g.addInput()
        v.setType(torch._C.TensorType.get())
        p.setType(torch._C.TensorType.get())
        flags.append(_kept_live(g, _restore(g, v, p).output()))
        feeds += [buf, pristine]
    _returning(g, flags)
    fn = torch._C._create_function_from_graph("restores", g)
    return lambda: fn(*feeds)


def _kind(t) -> tuple | None:
    """What makes two tensors interchangeable for the ops that read them: shape, dtype and layout (an MKLDNN
    tensor's whole memory descriptor). None: its layout cannot be read, so it is not shared."""
    import torch

    if t.is_mkldnn:
        try:
            md = torch.ops.mkldnn._get_mkldnn_serialized_md(t).numpy().tobytes()
        except (AttributeError, RuntimeError):  # a private op: it may vanish in a future torch
            return None
        return ("mkldnn", tuple(t.shape), t.dtype, md)
    return ("strided", tuple(t.shape), tuple(t.stride()), t.dtype)


def _copy(t):
    """A copy of `t` with its layout: an MKLDNN tensor's descriptor, a strided tensor's strides (gaps kept)."""
    import torch

    if t.is_mkldnn:
        return t.clone()
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device).copy_(t)


def _shared_buffers(outputs: list) -> list:
    """Per fed tensor, the (buffer, pristine copy) it is fed and restored from: one pair per kind, holding the
    first real output of that kind; None for a tensor left cold and fed as it is (its elements share memory)."""
    pairs: dict = {}
    got = []
    for i, t in enumerate(outputs):
        if not _touchable(t):
            got.append(None)
            continue
        kind = _kind(t)
        key = kind if kind is not None else ("own", i)
        if key not in pairs:
            buf = _copy(t)
            if kind is not None and _kind(buf) != kind:  # the copy took another layout: this one is its own
                key = ("own", i)
            pairs[key] = (buf, _copy(t))
        got.append(pairs[key])
    return got


def _clone(graph, value, before=None, after=None):
    """A clone of `value` inserted just before or just after a node: its values there, whatever an in-place op
    does to it later."""
    with graph.insert_point_guard(before or after):
        node = graph.create("aten::clone", [value, graph.insertConstant(None)])
    node.output().setType(value.type())
    if before is not None:
        node.insertBefore(before)
    else:
        node.insertAfter(after)
    return node.output()


def _capture(frozen, args) -> tuple[list, list]:
    """Per cut node (graph order), its first input as the node read it and its output as the node wrote it,
    from one forward of a copy of the graph that returns clones of them taken there (an in-place op after the
    node, such as RepViT's residual add_ into a conv's output, would change the tensor itself). An input whose
    strides a clone would not keep (an expanded view) is returned as it is. `args`: its input, or a tuple of
    its positional inputs."""
    import torch

    args = args if isinstance(args, tuple) else (args,)
    g = frozen.graph.copy()
    nodes = _cut(g)
    ret = g.return_node()
    n_out = len(list(ret.inputs()))
    raw, ins, outs = [], [], []
    for n in nodes:
        raw.append(n.inputsAt(0))
        ins.append(_clone(g, n.inputsAt(0), before=n))
        outs.append(_clone(g, n.output(), after=n))
    tup = _tuple_of(g, list(ret.inputs()) + raw + ins + outs)
    tup.insertBefore(ret)
    for i in reversed(range(n_out)):
        ret.removeInput(i)
    ret.addInput(tup.output())
    got = list(_function(g, "capture")(*args))[n_out:]
    k = len(nodes)
    kept = [c if c.is_mkldnn or torch._debug_has_internal_overlap(r) == 0 else r
            for r, c in zip(got[:k], got[k:2 * k])]
    return kept, got[2 * k:]


def _conv_pass(frozen, inputs: list, touch: bool = True, keep: bool = False):
    """One graph of every conv node, in order, each on a graph input of its own, touched just before it
    (touch); returns (fn, n, the inputs it touches). It returns the convs' outputs when `keep`; else each output is read once,
    right after its conv, and freed there, as in the forward, where it goes back to the allocator after its
    last use."""
    import torch

    src = frozen.graph.copy()
    g = torch._C.Graph()
    env: dict = {}
    feeds, outs, touched = [], [], []

    def clone(value):
        if value not in env:
            node = value.node()
            if node.kind() not in _CONSTANT_KINDS:
                raise ValueError(f"a conv node reads a {node.kind()}, not a constant: the convs cannot run apart")
            for i in node.inputs():
                clone(i)
            env[value] = g.insertNode(g.createClone(node, lambda old: env[old])).output()
        return env[value]

    for node, inp in zip(_cut(src), inputs):
        if node.kind() not in CONV_KINDS:
            continue
        v = g.addInput()
        v.setType(node.inputsAt(0).type())
        hot = touch and _touchable(inp)
        env[node.inputsAt(0)] = _touch(g, v, inp.is_mkldnn).output() if hot else v
        touched += [inp] if hot else []
        for i in list(node.inputs())[1:]:
            clone(i)
        out = g.insertNode(g.createClone(node, lambda old: env[old])).output()
        outs.append(out if keep else _kept_live(g, out))
        del env[node.inputsAt(0)]  # the next conv reading the same value gets its own input
        feeds.append(inp)
    if not outs:
        raise ValueError("the frozen graph has no conv node")
    _returning(g, outs)
    fn = torch._C._create_function_from_graph("convs", g)
    return (lambda: fn(*feeds)), len(outs), touched


def _restore_before_first_use(graph, value, pristine) -> None:
    """Insert a restore of `value` from `pristine` just before the first node (at the graph's top level) that
    reads it, and make every reader read the restored value. `value` must have a reader."""
    order = {n: i for i, n in enumerate(list(graph.nodes()) + [graph.return_node()])}
    readers = []
    for use in value.uses():
        n = use.user
        while n not in order:  # a reader inside an if or loop: the restore goes before that block
            n = n.owningBlock().owningNode()
        readers.append(n)
    with graph.insert_point_guard(min(readers, key=order.__getitem__)):
        restore = _restore(graph, value, pristine)
    value.replaceAllUsesWith(restore.output())
    restore.replaceInput(0, value)


def _return_beside(graph, values: list) -> None:
    """Make the graph return one tuple: what it returned, then `values` (so the nodes computing them stay live)."""
    ret = graph.return_node()
    old = list(ret.inputs())
    with graph.insert_point_guard(ret):
        tup = graph.insertNode(_tuple_of(graph, old + values))
    for i in reversed(range(len(old))):
        ret.removeInput(i)
    ret.addInput(tup.output())


def _keep_cut_inputs_live(graph, nodes: list) -> bool:
    """Return, beside the graph's output, every value a cut node reads that a kept node computes: once the cut
    node's output is fed, its input would otherwise be dead code, and the dense ops before a to_mkldnn (ConvNeXt's
    LayerNorm, Linear and GELU between its convs) would vanish from the remainder (which then read 0.24x)."""
    cut = set(nodes)
    live = []
    for node in nodes:
        v = node.inputsAt(0)
        if v.node() not in cut and v.node().kind() not in _CONSTANT_KINDS + ("prim::Param",) and v not in live:
            live.append(v)
    if not live:
        return False
    _return_beside(graph, live)
    return True


def _conversions_twice(frozen, inputs: list):
    """The frozen graph with a twin after each conversion node (reading the same input, its output read once and
    freed), and the number of twins; (None, 0) without conversions. What it takes longer than the forward is what
    the conversions cost inside the graph, each on what the node before has just written. On MobileNetV3 mb8 the
    profiler's per-node times (and a pass of the conversions alone, touched as the convs) summed to 5-6 ms where
    the twins added 0.8, and the prediction read 1.14x the forward (BENCHMARKS §18)."""
    import torch

    g = frozen.graph.copy()
    flags = []
    for node, inp in zip(_cut(g), inputs):
        if node.kind() not in CONVERSION_KINDS:
            continue
        twin = g.createClone(node, lambda v: v)
        twin.insertAfter(node)
        # one argument spelled out (the value it defaults to), so the executor's CSE does not merge the twins
        args = list(node.inputs())
        with g.insert_point_guard(twin):
            if args[1].node().kind() == "prim::Constant" and args[1].type().kind() == "NoneType":
                twin.replaceInput(1, g.insertConstant(inp.dtype))
            elif len(args) > 2 and args[2].type().kind() == "NoneType":  # to_dense's masked_grad
                twin.replaceInput(2, g.insertConstant(False))
            else:
                raise ValueError(f"a {node.kind()} node has no default argument to spell out: it cannot be twinned")
        flag = g.create("prim::is_mkldnn", [twin.output()])
        flag.output().setType(torch._C.BoolType.get())
        flag.insertAfter(twin)
        flags.append(flag.output())
    if not flags:
        return None, 0
    _return_beside(g, flags)
    return _function(g, "conversions_twice"), len(flags)


def cut_graph(frozen, x, touch: bool = True, share: bool = True) -> GraphParts:
    """Both parts of a frozen, optimized module, with their touches (touch=False: the parts cold, nothing to
    take off; for bench_model_order). `x` is its input, or a tuple of its positional inputs. Its remainder is
    fed one buffer per kind of output (share), or, where an op of the graph refuses two of its inputs in one
    buffer (index_add_ into a tensor from the same one), a buffer of each output's own. Raises when its graph
    cannot be cut (the caller falls back)."""
    import torch

    args = x if isinstance(x, tuple) else (x,)
    inputs, outputs = _capture(frozen, args)
    convs, n, conv_touched = _conv_pass(frozen, inputs, touch)
    g = frozen.graph.copy()
    nodes = _cut(g)
    wrapped = _keep_cut_inputs_live(g, nodes)  # then the remainder returns (its output, the kept values)
    fed = []
    for node in nodes:
        v = g.addInput()
        v.setType(node.output().type())
        node.output().replaceAllUsesWith(v)
        fed.append(v)
    for node in reversed(nodes):
        node.destroy()
    torch._C._jit_pass_dce(g)
    kept = [(v, t) for v, t in zip(fed, outputs) if v.uses()]
    for v in reversed([v for v in fed if not v.uses()]):  # outputs only a cut node read: not fed at all
        g.eraseInput(v.offset())
    del outputs  # those fed through the shared buffers below are freed with it
    feeds, pristines, restored = [t for _, t in kept], [], []
    if touch:
        pairs = _shared_buffers(feeds) if share else [(t, _copy(t)) if _touchable(t) else None for t in feeds]
        for i, ((v, _), pair) in enumerate(zip(kept, pairs)):
            if pair is None:  # left cold: fed as captured
                continue
            feeds[i] = pair[0]
            p = g.addInput()
            p.setType(v.type())
            _restore_before_first_use(g, v, p)
            pristines.append(pair[1])
            restored.append(pair)
    rem = _function(g, "remainder")
    call = ((lambda: rem(*args, *feeds, *pristines)[0]) if wrapped
            else (lambda: rem(*args, *feeds, *pristines)))
    parts = GraphParts(convs, _touches(conv_touched), call, _restores(restored), n,
                       n_fed=len(feeds), n_buffers=len({id(t) for t in feeds}))
    try:
        twice, n_twins = _conversions_twice(frozen, inputs)
    except Exception:  # noqa: BLE001 - a graph whose conversions cannot be twinned: the profiler times them
        twice, n_twins = None, 0
    if twice is not None:
        parts.conversions_twice, parts.n_conversions = (lambda: twice(*args)), n_twins
    with torch.no_grad():  # each part once, here: one that cannot run (an in-place touch refused) falls back now
        for fn in (parts.convs, parts.conv_touches):
            fn()
        try:
            parts.remainder()
        except RuntimeError:
            if not (touch and share):
                raise
            return cut_graph(frozen, x, touch, share=False)
        parts.remainder_touches()
        if parts.conversions_twice is not None:
            try:
                parts.conversions_twice()
            except Exception:  # noqa: BLE001 - as above: the profiler's figure instead
                parts.conversions_twice, parts.n_conversions = None, 0
    return parts
