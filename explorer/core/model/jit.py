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
  outputs turned into graph inputs fed the real outputs of that forward (the stubbed model of the eager
  modes, in the graph's own terms). The conversions are timed apart, as for the other modes.

Inside the graph each node reads what the node before it has just written, from the caches; a part fed
captured tensors reads them from memory. On MobileNetV2, whose depthwise and 1x1 convs are bound by memory,
that alone put the parts at 1.20-1.28x the forward (ResNet-50, bound by compute: 1.02-1.03x). So each part
reads its inputs hot, as in the graph: every fed tensor is touched (an in-place no-op hardtanh, which reads
and writes it) just before its first use, and a graph of the same touches alone, timed beside it, is
subtracted. Paired against the forward (bench_model_order.py --mode jit_mkldnn, BENCHMARKS §8a, conversions
left out): MobileNetV2 mb1 0.96x, ResNet-50 mb1 0.99x, tiny 0.73x (with its conversions, ~0.9x).
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
    remainder: Callable[[], object]  # the graph without its conv and conversion nodes, on their real outputs (touched)
    remainder_touches: Callable[[], object]  # the touches of those outputs alone: subtracted from remainder
    n_convs: int
    conversions_twice: Callable[[], object] | None = None  # the graph with each conversion run twice; None: it has none
    n_conversions: int = 0


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
    conv): such a tensor is left cold."""
    import torch

    return t.is_mkldnn or torch._debug_has_internal_overlap(t) == 0


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


def _capture(frozen, args) -> tuple[list, list]:
    """Per cut node (graph order), its first input and its output from one forward of a copy of the graph
    that returns them (`args`: its input, or a tuple of its positional inputs)."""
    args = args if isinstance(args, tuple) else (args,)
    g = frozen.graph.copy()
    nodes = _cut(g)
    ret = g.return_node()
    n_out = len(list(ret.inputs()))
    values = list(ret.inputs()) + [n.inputsAt(0) for n in nodes] + [n.output() for n in nodes]
    tup = _tuple_of(g, values)
    tup.insertBefore(ret)
    for i in reversed(range(n_out)):
        ret.removeInput(i)
    ret.addInput(tup.output())
    got = list(_function(g, "capture")(*args))[n_out:]
    return got[: len(nodes)], got[len(nodes):]


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


def _touch_before_first_use(graph, value, blocked: bool) -> bool:
    """Insert a touch of `value` just before the first node (at the graph's top level) that reads it, and
    make every reader read the touched value. False if nothing reads it."""
    uses = value.uses()
    if not uses:
        return False
    order = {n: i for i, n in enumerate(list(graph.nodes()) + [graph.return_node()])}
    readers = []
    for use in uses:
        n = use.user
        while n not in order:  # a reader inside an if or loop: the touch goes before that block
            n = n.owningBlock().owningNode()
        readers.append(n)
    with graph.insert_point_guard(min(readers, key=order.__getitem__)):
        touch = _touch(graph, value, blocked)
    value.replaceAllUsesWith(touch.output())
    touch.replaceInput(0, value)
    return True


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


def cut_graph(frozen, x, touch: bool = True) -> GraphParts:
    """Both parts of a frozen, optimized module, with their touches (touch=False: the parts cold, nothing to
    take off; for bench_model_order). `x` is its input, or a tuple of its positional inputs. Raises when its
    graph cannot be cut (the caller falls back)."""
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
    touched = [t for v, t in zip(fed, outputs)
               if touch and _touchable(t) and _touch_before_first_use(g, v, t.is_mkldnn)]
    rem = _function(g, "remainder")
    call = (lambda: rem(*args, *outputs)[0]) if wrapped else (lambda: rem(*args, *outputs))
    parts = GraphParts(convs, _touches(conv_touched), call, _touches(touched), n)
    try:
        twice, n_twins = _conversions_twice(frozen, inputs)
    except Exception:  # noqa: BLE001 - a graph whose conversions cannot be twinned: the profiler times them
        twice, n_twins = None, 0
    if twice is not None:
        parts.conversions_twice, parts.n_conversions = (lambda: twice(*args)), n_twins
    with torch.no_grad():  # each part once, here: one that cannot run (an in-place touch refused) falls back now
        for fn in (parts.convs, parts.conv_touches, parts.remainder, parts.remainder_touches):
            fn()
        if parts.conversions_twice is not None:
            try:
                parts.conversions_twice()
            except Exception:  # noqa: BLE001 - as above: the profiler's figure instead
                parts.conversions_twice, parts.n_conversions = None, 0
    return parts
