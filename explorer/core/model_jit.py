"""jit_mkldnn's prediction parts, cut from its own frozen graph with TorchScript's Graph API.

torch.jit.optimize_for_inference runs a graph of its own: BatchNorm folded into the convs, each conv a
prim::mkldnn_convolution on blocked tensors, ReLU6 as prim::MKLDNNHardTanh_, and the interpreter between the
nodes, with no Python. Eager stand-ins for its parts (the to_mkldnn model's convs in order, the to_mkldnn
model with BN folded and its convs stubbed) pay Python on every module and conv call, which the graph does
not: paired against the forward (bench_model_order.py, BENCHMARKS §8a) they summed to 1.05x a tiny model's,
1.40x MobileNetV2 mb1's and 1.09x ResNet-50 mb1's (conversions left out); the graph's own parts to 0.80x,
1.28x and 1.02x. So the parts are taken from the graph itself:
- the convs: one graph holding every conv node of the frozen graph, in its order, each reading its own
  input (the real one, from one forward), run in one call;
- the remainder: the frozen graph without its conv and conversion (to_mkldnn/to_dense) nodes, their
  outputs turned into graph inputs fed the real outputs of that forward (the stubbed model of the eager
  modes, in the graph's own terms). The conversions are timed apart, as for the other modes.
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
    convs: Callable[[], object]  # every conv node of the graph, in its order, on its real input: one call
    remainder: Callable[[], object]  # the graph without its conv and conversion nodes, on their real outputs
    n_convs: int


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


def _capture(frozen, x) -> tuple[list, list]:
    """Per cut node (graph order), its first input and its output from one forward of a copy of the graph
    that returns them."""
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
    got = list(_function(g, "capture")(x))[n_out:]
    return got[: len(nodes)], got[len(nodes):]


def _conv_pass(frozen, inputs: list):
    """One graph of every conv node, in order, each on a graph input of its own; returns (fn, n)."""
    import torch

    src = frozen.graph.copy()
    g = torch._C.Graph()
    env: dict = {}
    feeds, outs = [], []

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
        env[node.inputsAt(0)] = v
        for i in list(node.inputs())[1:]:
            clone(i)
        outs.append(g.insertNode(g.createClone(node, lambda old: env[old])).output())
        del env[node.inputsAt(0)]  # the next conv reading the same value gets its own input
        feeds.append(inp)
    if not outs:
        raise ValueError("the frozen graph has no conv node")
    tup = g.insertNode(_tuple_of(g, outs))
    g.registerOutput(tup.output())  # kept as outputs: a conv whose output nobody reads is dead code
    fn = torch._C._create_function_from_graph("convs", g)
    return (lambda: fn(*feeds)), len(outs)


def cut_graph(frozen, x) -> GraphParts:
    """Both parts of a frozen, optimized module. Raises when its graph cannot be cut (the caller falls back)."""
    import torch

    inputs, outputs = _capture(frozen, x)
    convs, n = _conv_pass(frozen, inputs)
    g = frozen.graph.copy()
    nodes = _cut(g)
    for node in nodes:
        v = g.addInput()
        v.setType(node.output().type())
        node.output().replaceAllUsesWith(v)
    for node in reversed(nodes):
        node.destroy()
    torch._C._jit_pass_dce(g)
    rem = _function(g, "remainder")
    return GraphParts(convs, lambda: rem(x, *outputs), n)
