"""The whole-model planner: should I convert my model, and what will it gain end to end?

1. Load: a built-in reference network (explorer.core.model.zoo), a user's `package.module:callable`
   (imported from the current folder or sys.path), a saved torch.export program (.pt2) or a TorchScript file.
2. Inventory: one forward pass that sees the real shapes. Eager and exported models run under a
   TorchDispatchMode that records every aten.convolution call (its weight is matched to the parameter's
   name, so each conv is named after its module path); TorchScript runs under the profiler with
   record_shapes (the dispatch mode does not see inside the TorchScript interpreter). Identical convs
   (same benchdnn descriptor, bias and dtype) are one layer with a count: measured once.
3. Per layer: the distinct convs as SweepPoints through explorer.core.jobs.sweep.iter_points (the batch
   machinery, with its interference rules and retries).
4. End-to-end modes, measured for real (dense NCHW input in, dense output out, per forward):
     nchw           the model as it is
     channels_last  model and input in torch.channels_last (the input conversion is inside the call)
     to_mkldnn      torch.utils.mkldnn.to_mkldnn(model); x.to_mkldnn() in, .to_dense() out, per call
     jit_mkldnn     torch.jit.freeze + torch.jit.optimize_for_inference: PyTorch's own route to MKLDNN
   Each mode's output is checked against the NCHW model's; a mode the model cannot run is a row with the
   exact error, the op and the module it happened in.
5. Prediction: per mode, the mode's convs timed in model order (model_sequence: every conv site once per
   pass, each with its own tensors, on the mode's per-layer path; for to_mkldnn and jit_mkldnn the convs
   after the first take the mkldnn_chained variant, a blocked input as the MKLDNN model and the frozen
   graph pass it conv to conv) + the conversions the mode forces (timed on their own) + the non-conv
   remainder, *measured* by timing the mode's model with every conv replaced by a stub that returns that
   conv's real output (so BN, ReLU, adds, pools and the classifier run exactly as in the mode, on tensors
   of the mode's layout). The conv pass, the remainder and the mode's own forward are timed in one loop,
   round by round, so prediction and measurement see the same machine. The per-layer table's sum (each
   conv alone, its data hot in the caches) is kept beside it (conv_alone_ms); without the in-order pass
   the prediction falls back to it. For jit_mkldnn both parts come from its own frozen graph (model_jit):
   its conv nodes, in one graph call on their real inputs, and the graph without its conv and conversion
   nodes, fed their real outputs, each part's inputs touched just before their first use so they are read
   hot as inside the graph (the touches timed alone in the same round and taken off); the conversions are
   the graph's to_mkldnn/to_dense nodes, timed by the profiler. Only when the graph cannot be cut do eager
   stand-ins take their place: the convs in model order on mkldnn_chained, and the to_mkldnn model with
   BatchNorm folded (torch.fx, as torch.jit.freeze folds it), its ReLU6-like modules running the jit's flat
   in-place aten op.

Every timed loop carries the interference verdict of explorer.core.measure.interference; a noisy loop is measured
again (runner.MAX_ATTEMPTS) and kept marked. A ratio built on a noisy figure is uncertain, never a finding.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from explorer.core.errors import InputError
from explorer.core.model.chained import CHAINED_HELP, CHAINED_MODES, CHAINED_PATH, measure_chained, prepare_chained  # noqa: F401 - re-exported
from explorer.core.model.drift import DRIFT_LIMIT, drift, pick_reference, time_reference
from explorer.core.model.sequence import build_sequence, time_sequence

# torch 2.13 marks every torch.jit entry point deprecated; the jit mode is PyTorch's own MKLDNN route and
# is measured on purpose, so the warning is noise here.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.[a-z_]+` is deprecated", category=DeprecationWarning)

MODES = ("nchw", "channels_last", "to_mkldnn", "jit_mkldnn")
MODE_HELP = {
    "nchw": "the model as it is (contiguous NCHW)",
    "channels_last": "model and input in torch.channels_last (input converted inside each forward)",
    "to_mkldnn": "torch.utils.mkldnn.to_mkldnn(model); x.to_mkldnn() in and .to_dense() out, per forward",
    "jit_mkldnn": "torch.jit.freeze + torch.jit.optimize_for_inference (PyTorch's own route to MKLDNN layouts)",
}
MODE_PATH = {"nchw": "dense", "channels_last": "channels_last", "to_mkldnn": "mkldnn", "jit_mkldnn": "mkldnn"}
MODE_LABEL = {"nchw": "model as it is", "channels_last": "channels_last", "to_mkldnn": "to_mkldnn(model)",
              "jit_mkldnn": "jit.freeze+optimize_for_inference"}
DEFAULT_INPUT = (1, 3, 224, 224)
DEFAULT_MODE_BUDGET_MS = 2000.0
MODEL_FILE_SUFFIXES = (".pt2", ".pt", ".ts", ".pth", ".jit", ".torchscript")
_CONV_TYPES = ("Conv1d", "Conv2d", "Conv3d")


# ---- loading ----------------------------------------------------------------------------------------
@dataclass
class LoadedModel:
    module: object  # nn.Module, ScriptModule or the GraphModule of an exported program
    label: str  # what the user typed, or the built-in's name
    kind: str  # builtin | callable | export | torchscript
    default_input: tuple[int, ...] = DEFAULT_INPUT
    expected_input: tuple[int, ...] | None = None  # an exported program's static input shape


def parse_input(text: str | None) -> tuple[int, ...] | None:
    """'1,3,224,224' -> (1, 3, 224, 224). Raises InputError (one sentence)."""
    if text is None:
        return None
    parts = [p.strip() for p in str(text).replace("x", ",").split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"--input {text!r} is not a shape of positive whole numbers such as 1,3,224,224.", "input")
    if not 2 <= len(parts) <= 5:
        raise InputError(f"--input {text!r} has {len(parts)} dimensions; a convolution input has 3 (N,C,L), "
                         f"4 (N,C,H,W) or 5 (N,C,D,H,W).", "input")
    return tuple(int(p) for p in parts)


def load_model(text: str, folder: str | None = None) -> LoadedModel:
    """A built-in name, package.module:callable (imported from `folder`, default the current one, or
    sys.path), or a .pt2 / TorchScript file (relative to `folder`). Raises InputError."""
    from torch import nn

    from explorer.core.model import zoo as model_zoo

    if not isinstance(text, str) or not text.strip():
        raise InputError("no model given; name a built-in (" + ", ".join(model_zoo.BUILTINS)
                         + "), a package.module:callable, or a .pt2 / TorchScript file.", "model")
    text = text.strip()
    name = model_zoo.builtin_name(text)
    if name is not None:
        return LoadedModel(model_zoo.build(name), name, "builtin", model_zoo.BUILTINS[name][1])
    p = Path(text)
    if folder and not p.is_absolute():
        p = Path(folder) / p
    if p.suffix.lower() in MODEL_FILE_SUFFIXES or (p.is_file() and ":" not in text):
        return _load_file(p, text)
    if ":" not in text:
        raise InputError(f"unknown model {text!r}: name a built-in ({', '.join(model_zoo.BUILTINS)}), a "
                         f"package.module:callable, or a .pt2 / TorchScript file.", "model")
    mod_name, _, attr = text.partition(":")
    if not mod_name or not attr:
        raise InputError(f"{text!r} is not package.module:callable (both parts are needed).", "model")
    here = folder or os.getcwd()
    if here not in sys.path and (folder or "" not in sys.path):
        sys.path.insert(0, here)  # the current folder (the caller's, in the measuring process), as `python -m` would
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        raise InputError(f"no module named {e.name or mod_name!r} (looked in the current folder and sys.path).",
                         "model") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed to import: one line
        raise InputError(f"importing {mod_name} failed: {type(e).__name__}: {_first_line(e)}", "model") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InputError(f"module {mod_name!r} has no attribute {attr!r}.", "model")
        obj = getattr(obj, part)
    if isinstance(obj, nn.Module):
        model = obj
    else:
        if not callable(obj):
            raise InputError(f"{text} is a {type(obj).__name__}, not a callable that returns a torch.nn.Module.",
                             "model")
        try:
            model = obj()
        except Exception as e:  # noqa: BLE001
            raise InputError(f"{text}() raised {type(e).__name__}: {_first_line(e)}", "model") from None
        if not isinstance(model, nn.Module):
            raise InputError(f"{text}() returned a {type(model).__name__}, not a torch.nn.Module.", "model")
    model.eval()
    return LoadedModel(model, text, "callable")


def _load_file(p: Path, text: str) -> LoadedModel:
    import torch

    if not p.is_file():
        raise InputError(f"cannot open model file {text!r}: no such file.", "model")
    if p.suffix.lower() == ".pt2":
        try:
            ep = torch.export.load(str(p))
        except Exception as e:  # noqa: BLE001
            raise InputError(f"cannot load {text!r} as a torch.export program: {type(e).__name__}: "
                             f"{_first_line(e)}", "model") from None
        shape = _export_input_shape(ep)
        return LoadedModel(ep.module(), text, "export", shape or DEFAULT_INPUT, shape)
    try:
        m = torch.jit.load(str(p), map_location="cpu")
    except Exception as e:  # noqa: BLE001
        raise InputError(f"cannot load {text!r} as TorchScript (or a .pt2 torch.export program): "
                         f"{type(e).__name__}: {_first_line(e)}", "model") from None
    return LoadedModel(m.eval(), text, "torchscript")


def _export_input_shape(ep) -> tuple[int, ...] | None:
    users = set(ep.graph_signature.user_inputs)
    for n in ep.graph.nodes:
        if n.op == "placeholder" and n.name in users and "val" in n.meta:
            try:
                return tuple(int(d) for d in n.meta["val"].shape)
            except (TypeError, ValueError):  # symbolic dims: no fixed shape
                return None
    return None


def _first_line(e: BaseException) -> str:
    from explorer.core.paths.base import one_line

    return one_line(e)


# ---- inventory --------------------------------------------------------------------------------------
@dataclass
class ConvSite:
    """One convolution call seen in the forward pass."""

    module: str  # module path (conv1, layer1.0.conv2, ...) or conv#i when it cannot be named
    kind: str  # Conv1d | Conv2d | Conv3d
    input_shape: tuple
    weight_shape: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    groups: int
    bias: bool
    transposed: bool = False


@dataclass
class Layer:
    """A distinct convolution: one spec, measured once, counted `count` times."""

    spec: object  # ConvSpec named after its first module, or None when it cannot be measured here
    modules: list[str]
    kind: str
    input_shape: tuple
    desc: str  # benchdnn descriptor (also for the ones that cannot be measured)
    error: str = ""  # why it is not measured ("" when it is)

    @property
    def count(self) -> int:
        return len(self.modules)

    @property
    def name(self) -> str:
        return self.modules[0]


@dataclass
class Inventory:
    model: str
    input_shape: tuple
    dtype: str
    sites: list[ConvSite]
    layers: list[Layer]

    @property
    def total(self) -> int:
        return len(self.sites)

    def counts_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.sites:
            out[s.kind] = out.get(s.kind, 0) + 1
        return out

    def summary(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in self.counts_by_kind().items())
        return (f"{self.model}: {self.total} convolutions ({kinds}), {len(self.layers)} distinct, "
                f"input {'x'.join(map(str, self.input_shape))} {self.dtype}")


def _tuple(v, n: int) -> tuple:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 and n > 1 else v


def _record_convs(model, x) -> list[tuple]:
    """Every aten.convolution call of one forward: (input shape, weight shape, weight ptr, args)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    calls: list[tuple] = []
    conv = torch.ops.aten.convolution.default

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is conv:
                inp, w, b, stride, padding, dilation, transposed, _, groups = args[:9]
                calls.append((tuple(inp.shape), tuple(w.shape), w.data_ptr(), b is not None, tuple(stride),
                              tuple(padding), tuple(dilation), bool(transposed), int(groups)))
            return func(*args, **(kwargs or {}))

    with torch.no_grad(), Recorder():
        model(x)
    return calls


def _record_convs_profiler(model, x) -> list[tuple]:
    """The same from the profiler (TorchScript: the dispatch mode does not see inside the interpreter)."""
    import torch
    from torch.profiler import profile

    with quiet_stderr(), torch.no_grad(), profile(record_shapes=True) as prof:
        model(x)
    calls = []
    for e in prof.events():
        if e.name != "aten::convolution":
            continue
        shapes, concrete = e.input_shapes, getattr(e, "concrete_inputs", None) or []
        if len(shapes) < 2 or len(concrete) < 9:
            continue
        stride, padding, dilation, transposed, _, groups = concrete[3:9]
        calls.append((tuple(shapes[0]), tuple(shapes[1]), None, bool(shapes[2]), tuple(stride), tuple(padding),
                      tuple(dilation), bool(transposed), int(groups)))
    return calls


def _conv_modules(model) -> list[tuple[str, object]]:
    out = []
    for name, m in model.named_modules():
        t = getattr(m, "original_name", None) or type(m).__name__
        if t in _CONV_TYPES:
            out.append((name, m))
    return out


def check_input_rank(model, shape: tuple) -> None:
    """Refuse an input whose rank the model's first convolution cannot take (before any forward)."""
    convs = _conv_modules(model)
    if not convs:
        return
    name, m = convs[0]
    t = getattr(m, "original_name", None) or type(m).__name__
    want = {"Conv1d": 3, "Conv2d": 4, "Conv3d": 5}[t]
    if len(shape) != want:
        dims = {3: "N,C,L", 4: "N,C,H,W", 5: "N,C,D,H,W"}[want]
        raise InputError(f"--input {','.join(map(str, shape))} has {len(shape)} dimensions, but the model's first "
                         f"convolution ({name or 'the model'}, {t}) takes a {want}-D input ({dims}).", "input")
    ic = getattr(m, "in_channels", None)
    if isinstance(ic, int) and shape[1] != ic:
        raise InputError(f"--input {','.join(map(str, shape))} has {shape[1]} channels, but the model's first "
                         f"convolution ({name or 'the model'}) takes {ic}.", "input")


def forward_error(model, exc: BaseException) -> InputError:
    """A model that raised inside forward: that error, in one line."""
    return InputError(f"the model raised inside forward: {type(exc).__name__}: {_first_line(exc)}", "model")


def take_inventory(model, x, label: str = "model", dtype: str = "f32", kind: str = "callable") -> Inventory:
    """Run the model once and list every convolution, grouped into distinct layers. Raises InputError."""

    try:
        if kind == "torchscript":
            calls = _record_convs_profiler(model, x)
        else:
            calls = _record_convs(model, x)
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's forward failed: one line
        raise forward_error(model, e) from None
    names: dict[int, str] = {}
    for n, p in model.named_parameters():
        names.setdefault(p.data_ptr(), n[: -len(".weight")] if n.endswith(".weight") else n)
    mods = _conv_modules(model)
    kind_of = {n: (getattr(m, "original_name", None) or type(m).__name__) for n, m in mods}
    unused = list(mods)
    sites: list[ConvSite] = []
    for i, (ishape, wshape, ptr, bias, stride, padding, dilation, transposed, groups) in enumerate(calls):
        name = names.get(ptr) if ptr is not None else None
        if name is None:  # TorchScript: the next conv submodule whose weight has this shape
            for j, (n, m) in enumerate(unused):
                w = getattr(m, "weight", None)
                if w is not None and tuple(w.shape) == wshape:
                    name = n
                    unused.pop(j)
                    break
        name = name if name is not None else f"conv#{i}"
        nd = len(ishape) - 2
        kind_name = kind_of.get(name) or f"Conv{nd}d"
        sites.append(ConvSite(name, kind_name, ishape, wshape, _tuple(stride, nd), _tuple(padding, nd),
                              _tuple(dilation, nd), groups, bias, transposed))
    if not sites:
        raise InputError(f"{label} has no convolution (Conv1d/2d/3d) in its forward pass: nothing to plan.", "model")
    layers: dict[tuple, Layer] = {}
    for s in sites:
        spec, desc, err = site_spec(s, dtype)
        key = (desc, s.bias, dtype, s.kind)
        if key in layers:
            layers[key].modules.append(s.module)
        else:
            layers[key] = Layer(spec, [s.module], s.kind, s.input_shape, desc, err)
    return Inventory(label, tuple(x.shape), dtype, sites, list(layers.values()))


def site_spec(s: ConvSite, dtype: str):
    """(ConvSpec or None, benchdnn descriptor, reason it is not measured)."""
    from explorer.core.errors import SpecError
    from explorer.core.problem.spec import ConvSpec

    if s.transposed:
        return None, "", "a transposed convolution: not measured (only forward convolutions are)."
    nd = len(s.input_shape) - 2
    n, c = s.input_shape[:2]
    oc, k = s.weight_shape[0], s.weight_shape[2:]
    if nd == 3:
        d, h, w = s.input_shape[2:]
        desc = (f"g{s.groups}mb{n}ic{c}id{d}ih{h}iw{w}oc{oc}kd{k[0]}kh{k[1]}kw{k[2]}sd{s.stride[0]}sh{s.stride[1]}"
                f"sw{s.stride[2]}pd{s.padding[0]}ph{s.padding[1]}pw{s.padding[2]}dd{s.dilation[0] - 1}"
                f"dh{s.dilation[1] - 1}dw{s.dilation[2] - 1}")
        return None, desc, "a 3-D convolution: not measured yet (the per-layer paths are 2-D)."
    if nd == 1:
        ih, iw, kh, kw, sh, sw, ph, pw, dh, dw = 1, s.input_shape[2], 1, k[0], 1, s.stride[0], 0, s.padding[0], 0, s.dilation[0] - 1
    else:
        ih, iw = s.input_shape[2:]
        kh, kw = k
        (sh, sw), (ph, pw), (dh, dw) = s.stride, s.padding, (s.dilation[0] - 1, s.dilation[1] - 1)
    try:
        spec = ConvSpec(mb=n, g=s.groups, ic=c, ih=ih, iw=iw, oc=oc, kh=kh, kw=kw, sh=sh, sw=sw, ph=ph, pw=pw,
                        dh=dh, dw=dw, bias=s.bias, dtype=dtype, name=s.module).validate()
    except SpecError as e:
        return None, "", str(e)
    return spec, spec.desc, ""


# ---- events -----------------------------------------------------------------------------------------
@dataclass
class ModelOptions:
    modes: tuple[str, ...] = MODES
    mode_budget_ms: float = DEFAULT_MODE_BUDGET_MS
    min_samples: int = 5
    predict: bool = True

    def validate(self) -> ModelOptions:
        if not self.modes:
            raise InputError(f"no mode selected; choose from {', '.join(MODES)}.", "modes")
        for m in self.modes:
            if m not in MODES:
                raise InputError(f"unknown mode {m!r}; choose from {', '.join(MODES)}.", "modes")
        if "nchw" not in self.modes:
            self.modes = ("nchw",) + tuple(self.modes)  # every ratio is against the model as it is
        if not (1 <= self.mode_budget_ms <= 600_000):
            raise InputError(f"--mode-budget-ms must be from 1 to 600000, got {self.mode_budget_ms!r}.", "mode_budget_ms")
        return self


@dataclass
class ModelStarted:
    inventory: Inventory


@dataclass
class ModeStarted:
    mode: str
    index: int
    total: int


@dataclass
class ModeResult:
    """One end-to-end mode: measured per forward, predicted from the per-layer table."""

    mode: str
    status: str = "ok"  # ok | unsupported | error | skipped
    error: str = ""
    samples: int = 0
    measured_ms: float | None = None
    iqr_ms: float | None = None
    min_ms: float | None = None
    mean_ms: float | None = None
    p25_ms: float | None = None
    p75_ms: float | None = None
    stop_reason: str = ""
    max_abs_err: float | None = None
    rel_err: float | None = None
    conv_ms: float | None = None  # the convs' time the prediction used: in model order (model_sequence), else conv_alone_ms
    conv_alone_ms: float | None = None  # sum over convs of (count x that layer's per-layer table time, each alone)
    conv_seq: object = None  # model_sequence.SequenceTiming of this mode's convs in model order, or None
    conv_seq_quality: str = ""  # the interference verdict of the in-order conv loop
    conv_seq_note: str = ""  # why the convs were not timed in model order (the prediction then uses the table)
    graph_convs: int | None = None  # jit_mkldnn: conv nodes of the frozen graph its prediction ran (model_jit)
    graph_cut_error: str = ""  # jit_mkldnn: why its graph could not be cut into parts
    conversion_ms: float | None = None  # conversions the mode forces (input, output, at non-conv ops)
    remainder_ms: float | None = None  # the non-conv rest, measured with the convs stubbed out
    remainder_quality: str = ""
    # the convs' time inside this mode's own forward (model_inplace): beside conv_ms it shows whether the
    # per-layer table or the remainder is what a prediction misses
    convs_in_model_ms: float | None = None
    convs_in_model_note: str = ""
    # how far a reference layer's speed moved between the per-layer table and this mode (model_drift)
    host_drift_pct: float | None = None
    host_drift_ref: str = ""  # which layer: "reference layer NAME (dense)"
    host_drift_note: str = ""
    predicted_ms: float | None = None
    predict_note: str = ""  # why there is no prediction, or what it leaves out
    speedup: float | None = None  # nchw measured / this measured
    predicted_speedup: float | None = None  # nchw predicted / this predicted
    convs_faster: int | None = None  # convs (counted) whose path beats dense
    convs_total: int | None = None
    slower_layers: list = field(default_factory=list)  # names of layers slower than dense on this path
    uncertain: bool = False  # a figure behind the speedup or the prediction is noisy
    uncertain_reason: str = ""
    # interference columns of the measured loop (runner.fill_quality)
    quality: str = ""
    quality_reason: str = ""
    samples_used: int | None = None
    attempts: int | None = None
    runq_wait_pct: float | None = None
    faults_per_call: float | None = None
    ctx_switches_per_call: float | None = None
    cpu_pct: float | None = None
    steal_pct: float | None = None
    other_cpu_pct: float | None = None
    slowdown_pct: float | None = None
    loadavg: float | None = None

    @property
    def noisy(self) -> bool:
        return self.quality == "noisy"

    @property
    def predicted_noisy(self) -> bool:
        """A loop behind the prediction (the convs in order, the remainder or the conversions) is noisy."""
        return "noisy" in (self.conv_seq_quality, self.remainder_quality)

    @property
    def agreement_noise(self) -> list[str]:
        """Which noisy loops predicted/measured stands on (none: a ratio to read as a finding)."""
        return [what for what, bad in (("the measured loop is noisy", self.noisy),
                                       ("the loop of the convs in model order is noisy", self.conv_seq_quality == "noisy"),
                                       ("the remainder or conversion loop is noisy", self.remainder_quality == "noisy"))
                if bad]

    @property
    def agreement_noisy(self) -> bool:
        """Predicted/measured stands on a noisy loop: a ratio to read as uncertain, not as a miss."""
        return bool(self.agreement_noise)


@dataclass
class ModeFinished:
    result: ModeResult


@dataclass
class ModelFinished:
    report: "ModelReport"
    cancelled: bool = False


@dataclass
class LayerSummary:
    """A distinct layer and what the per-layer table says about it."""

    layer: Layer
    results: dict  # path -> Result (ok or not)
    best_path: str = ""
    best_ms: float | None = None
    margin: float | None = None  # second best / best (how much the winner wins by)
    noisy: bool = False
    chained: object = None  # Result of the mkldnn_chained variant (jit_mkldnn's per-layer time), or None
    in_sequence: dict = field(default_factory=dict)  # path -> ms per call with the model's other convs in between


@dataclass
class ModelReport:
    inventory: Inventory
    layers: list[LayerSummary]
    modes: list[ModeResult]
    threads: int = 1
    started_at: str = ""

    def mode(self, name: str) -> ModeResult | None:
        return next((m for m in self.modes if m.mode == name), None)

    def answer(self) -> str:
        """The one line the user came for: the best mode that runs, measured and predicted."""
        return answer_line(self)


# ---- per layer ----------------------------------------------------------------------------------------
def layer_points(inv: Inventory):
    """One SweepPoint per distinct layer (the ones that cannot be measured are skipped points)."""
    from explorer.core.problem.sweep_plan import SweepPoint

    pts = []
    for i, lay in enumerate(inv.layers):
        pts.append(SweepPoint(i, {}, lay.spec, None, lay.error, None if not lay.error else "desc", None,
                              lay.desc or lay.name))
    return pts


def summarize_layer(layer: Layer, results: dict) -> LayerSummary:
    ok = sorted((r.median_ms, p) for p, r in results.items() if r.status == "ok" and r.median_ms)
    s = LayerSummary(layer, results)
    if ok:
        s.best_ms, s.best_path = ok[0]
        if len(ok) > 1:
            s.margin = ok[1][0] / ok[0][0]
    s.noisy = any(getattr(r, "quality", "") == "noisy" for r in results.values())
    return s


# ---- timing helpers -----------------------------------------------------------------------------------
def timed(fn: Callable[[], object], budget_ms: float, cancel, min_samples: int = 5, warmup: int = 1):
    """The runner's rule for one end-to-end loop: a noisy loop is measured again, up to MAX_ATTEMPTS,
    and the better of the attempts kept (runner.better). Returns (Measurement, attempts) or None if cancelled."""
    from explorer.core.measure.harness import Budget, measure
    from explorer.core.measure.retry import MAX_ATTEMPTS, better

    m = None
    attempt = 0
    for attempt in range(1, MAX_ATTEMPTS + 1):
        new = measure(fn, Budget(budget_ms, min_samples, warmup=warmup), cancel)
        if new.stop_reason == "cancelled":
            return None
        m = better(m, new)
        warmup = 0
        if m.quality != "noisy":
            break
    return m, attempt


def _stub_module(cached):
    from torch import nn

    class ConvStub(nn.Module):
        """A conv replaced by its real output: the model runs everything but the convs."""

        def __init__(self, out):
            super().__init__()
            self.out = out

        def forward(self, *args, **kwargs):
            return self.out

    return ConvStub(cached)


def _recorder_module(inner, store: dict, key: str):
    from torch import nn

    class ConvRecorder(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kwargs):
            out = self.inner(*args, **kwargs)
            store[key] = out
            return out

    return ConvRecorder()


def set_submodule(root, path: str, new) -> None:
    parent_path, _, name = path.rpartition(".")
    parent = root.get_submodule(parent_path) if parent_path else root
    setattr(parent, name, new)


def conv_paths(model) -> list[str]:
    out = []
    for name, m in model.named_modules():
        t = type(m).__name__
        if name and (t in _CONV_TYPES or t in ("MkldnnConv1d", "MkldnnConv2d", "MkldnnConv3d")):
            out.append(name)
    return out


def stub_convs(model, call: Callable[[], object]) -> int:
    """Replace every conv module of `model` (in place) by a stub returning the output it gave in `call()`.
    Returns how many were stubbed (0: the convs are not modules, e.g. TorchScript or an exported graph)."""
    import torch

    if isinstance(model, torch.jit.ScriptModule):
        return 0
    paths = conv_paths(model)
    if not paths:
        return 0
    store: dict = {}
    originals = {p: model.get_submodule(p) for p in paths}
    for p in paths:
        set_submodule(model, p, _recorder_module(originals[p], store, p))
    with torch.no_grad():
        call()
    for p in paths:
        if p in store:
            set_submodule(model, p, _stub_module(store[p]))
        else:
            set_submodule(model, p, originals[p])
    return sum(1 for p in paths if p in store)


def _dense(out):
    import torch

    if isinstance(out, torch.Tensor):
        return out.to_dense() if out.layout == torch._mkldnn else out
    if isinstance(out, (tuple, list)):
        return type(out)(_dense(o) for o in out)
    if isinstance(out, dict):
        return {k: _dense(v) for k, v in out.items()}
    return out


def _flat(out) -> list:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in _flat(v)]
    return []


def compare_outputs(out, ref) -> tuple[float | None, float | None]:
    """(max abs error, max abs error / max |ref|) of a mode's output against the NCHW model's."""
    a, b = _flat(_dense(out)), _flat(ref)
    if len(a) != len(b) or not a:
        return None, None
    err = max(float((x.float() - y.float()).abs().max()) for x, y in zip(a, b))
    scale = max(float(y.float().abs().max()) for y in b) or 1.0
    return err, err / scale


def _pop(stack: list) -> None:
    """A forward hook's body: it must return None, or it would replace the module's output."""
    if stack:
        stack.pop()


def _where(model, call) -> str:
    """Where a failing forward failed: the aten op (a dispatch mode notes the last one) and the innermost
    module running at the time (pre/post forward hooks keep a stack), as " (at aten.mean.dim in act, ReLU6)"."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    stack: list[str] = []
    last = {"op": None}

    class LastOp(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            last["op"] = func
            return func(*args, **(kwargs or {}))

    hooks = []
    failed = False
    try:
        for name, m in model.named_modules():
            if name and not isinstance(m, torch.jit.ScriptModule):
                hooks.append(m.register_forward_pre_hook(lambda _m, _a, n=name: stack.append(n)))
                hooks.append(m.register_forward_hook(lambda _m, _a, _o: _pop(stack)))
        with torch.no_grad(), LastOp():
            call()
    except Exception:  # noqa: BLE001 - the same failure, expected
        failed = True
    finally:
        for h in hooks:
            h.remove()
    if not failed:
        return ""
    parts = []
    if last["op"] is not None:
        parts.append(f"at {last['op']}")
    if stack:
        try:
            t = type(model.get_submodule(stack[-1])).__name__
        except AttributeError:
            t = ""
        parts.append(f"in {stack[-1]}{', ' + t if t else ''}")
    return f" ({' '.join(parts)})" if parts else ""


@contextlib.contextmanager
def quiet_stderr():
    """Silence fd 2 for a block: the profiler (kineto) prints start/stop lines there from C++, and an FX
    module prints its own traceback there before raising; the exception itself is still raised."""
    import io

    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# ---- modes ----------------------------------------------------------------------------------------------
@dataclass
class PreparedMode:
    fn: Callable[[], object]  # the timed forward: dense input in, the mode's output (dense) out
    model: object  # the mode's own model (a private copy: stubbing may change it)
    remainder: Callable[[], Callable[[], object] | None] | None = None  # builds the stubbed forward
    conversions: list = field(default_factory=list)  # (label, fn) of the conversions the mode forces
    conversion_ms: Callable[[], float] | None = None  # or a function measuring them together
    note: str = ""
    graph_parts: object = None  # jit_mkldnn: model_jit.GraphParts, once remainder() has cut the graph
    graph_cut_error: str = ""  # why the graph could not be cut (the eager stand-ins are used then)


def _prepare_mode(mode: str, model, x, dtype) -> PreparedMode:
    import torch
    import torch.utils.mkldnn  # noqa: F401

    from explorer.core.paths.base import TORCH_DTYPES

    dt = TORCH_DTYPES[dtype]
    if mode == "nchw":
        m = _copy(model)

        def rem():
            m2 = _copy(model)
            n = stub_convs(m2, lambda: m2(x))
            return (lambda: m2(x)) if n else None

        return PreparedMode(lambda: m(x), m, rem)
    if mode == "channels_last":
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}.get(x.dim())
        if fmt is None:
            raise NotImplementedError(f"channels_last needs a 4-D or 5-D input, got {x.dim()}-D")
        m = _copy(model).to(memory_format=fmt)
        xc = x.contiguous(memory_format=fmt)

        def rem():
            m2 = _copy(model).to(memory_format=fmt)
            n = stub_convs(m2, lambda: m2(xc))
            return (lambda: m2(xc)) if n else None

        return PreparedMode(lambda: m(x.contiguous(memory_format=fmt)), m, rem,
                            [("input to channels_last", lambda: x.contiguous(memory_format=fmt))])
    if mode == "to_mkldnn":
        m = torch.utils.mkldnn.to_mkldnn(_copy(model), dt)
        xm = x.to_mkldnn()
        with torch.no_grad():
            ym = m(xm)
        outs = [t for t in _flat(ym) if t.layout == torch._mkldnn]

        def rem():
            m2 = torch.utils.mkldnn.to_mkldnn(_copy(model), dt)
            n = stub_convs(m2, lambda: m2(xm))
            return (lambda: m2(xm)) if n else None

        convs = [("input x.to_mkldnn()", lambda: x.to_mkldnn())]
        convs += [(f"output {i} .to_dense()", (lambda t=t: t.to_dense())) for i, t in enumerate(outs)]
        return PreparedMode(lambda: _dense(m(x.to_mkldnn())), m, rem, convs)
    if mode == "jit_mkldnn":
        with torch.no_grad():
            base = _copy(model).eval()
            how = "script"
            try:
                scripted = torch.jit.script(base)
            except Exception:  # noqa: BLE001 - not scriptable: trace it (shapes fixed to this input)
                scripted, how = torch.jit.trace(base, x, check_trace=False), "trace"
            frozen = torch.jit.optimize_for_inference(torch.jit.freeze(scripted.eval()))
            for _ in range(3):  # the profiling executor optimises during the first calls
                frozen(x)

        pm = PreparedMode(lambda: frozen(x), frozen, None, [], lambda: _graph_conversion_ms(frozen, x),
                          note=f"torch.jit.{how}")

        def rem():
            from explorer.core.model.jit import cut_graph
            from explorer.core.paths.base import one_line

            try:  # the graph's own parts (model_jit); the eager stand-ins only when it cannot be cut
                pm.graph_parts = cut_graph(frozen, x)
                return pm.graph_parts.remainder
            except Exception as e:  # noqa: BLE001
                pm.graph_cut_error = f"{type(e).__name__}: {one_line(e)}"
            folded = _fold_bn(model)
            if folded is None:
                return None
            m2 = torch.utils.mkldnn.to_mkldnn(folded, dt)
            xm = x.to_mkldnn()
            _make_mkldnn_runnable(m2, lambda: m2(xm))
            n = stub_convs(m2, lambda: m2(xm))
            return (lambda: m2(xm)) if n else None

        pm.remainder = rem
        return pm
    raise ValueError(mode)


# Eltwise modules torch.jit.optimize_for_inference runs on MKLDNN tensors with its own ops
# (prim::MKLDNNHardTanh_, ...), which torch does not offer outside TorchScript.
_JIT_MKLDNN_ELTWISE = ("ReLU6", "Hardtanh", "Hardswish", "Hardsigmoid", "SiLU", "GELU", "ELU", "LeakyReLU")


def _flat_eltwise(mod) -> Callable:
    """The in-place dense op the jit runs for eltwise module `mod` on a flat buffer."""
    import torch.nn.functional as F

    t = type(mod).__name__
    if t in ("ReLU6", "Hardtanh"):
        lo, hi = getattr(mod, "min_val", 0.0), getattr(mod, "max_val", 6.0)
        return lambda b: b.clamp_(lo, hi)
    if t == "Hardswish":
        return lambda b: F.hardswish(b, inplace=True)
    if t == "Hardsigmoid":
        return lambda b: F.hardsigmoid(b, inplace=True)
    if t == "SiLU":
        return lambda b: F.silu(b, inplace=True)
    if t == "ELU":
        return lambda b: F.elu(b, getattr(mod, "alpha", 1.0), inplace=True)
    if t == "LeakyReLU":
        return lambda b: F.leaky_relu(b, getattr(mod, "negative_slope", 0.01), inplace=True)
    return lambda b: mod(b)  # GELU: out of place


def _failing_module(model, call) -> str | None:
    """The innermost module running when call() raised (None: it did not raise, or raised outside a module)."""
    import torch

    stack: list[str] = []
    hooks = []
    try:
        for name, m in model.named_modules():
            if name and not isinstance(m, torch.jit.ScriptModule):
                hooks.append(m.register_forward_pre_hook(lambda _m, _a, n=name: stack.append(n)))
                hooks.append(m.register_forward_hook(lambda _m, _a, _o: _pop(stack)))
        with torch.no_grad():
            call()
        return None
    except Exception:  # noqa: BLE001
        if not stack:
            raise
        return stack[-1]
    finally:
        for h in hooks:
            h.remove()


def _make_mkldnn_runnable(model, call, max_fixes: int = 500) -> list[str]:
    """Make a to_mkldnn model run as the jit's MKLDNN graph would, for the remainder estimate: an eltwise
    module the jit runs on MKLDNN tensors becomes an in-place MKLDNN ReLU (the same one memory pass);
    any other module that refuses MKLDNN tensors runs dense between a to_dense and a to_mkldnn, the
    conversions the jit inserts there. Raises when an op outside any module refuses (it cannot be wrapped)."""
    from torch import nn

    class MkldnnEltwise(nn.Module):
        """The jit's prim::MKLDNNHardTanh_ (and kin): the dense aten op in place on the MKLDNN tensor's buffer
        seen as a flat tensor (frozen_ops_to_mkldnn.cpp, createUnaryOp), e.g. aten::clamp on [1204224]. An
        MKLDNN relu_ is not that op: it builds an oneDNN eltwise each call (~95 us per MobileNetV2 mb1 call,
        against ~25 us for the clamp). Torch offers no flat view of an MKLDNN buffer outside TorchScript, so
        the op runs on a dense buffer of the same size, one per size (as warm as the conv output it stands
        for); the MKLDNN tensor passes through unchanged."""

        def __init__(self, inner):
            super().__init__()
            self.op = _flat_eltwise(inner)

        def forward(self, x):
            n = x.numel()
            buf = buffers.get((n, x.dtype))
            if buf is None:
                buf = buffers[(n, x.dtype)] = torch.zeros(n, dtype=x.dtype)
            self.op(buf)
            return x

    class DenseIsland(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x.to_dense()).to_mkldnn()

    import torch

    buffers: dict = {}
    fixed: list[str] = []
    for _ in range(max_fixes):
        path = _failing_module(model, call)
        if path is None:
            return fixed
        mod = model.get_submodule(path)
        if isinstance(mod, (MkldnnEltwise, DenseIsland)):
            raise RuntimeError(f"{path} still refuses MKLDNN tensors")
        new = MkldnnEltwise(mod) if type(mod).__name__ in _JIT_MKLDNN_ELTWISE else DenseIsland(mod)
        set_submodule(model, path, new)
        fixed.append(path)
    raise RuntimeError("too many modules refuse MKLDNN tensors")


def _copy(model):
    import torch

    if isinstance(model, torch.jit.ScriptModule):
        return model  # TorchScript modules are not copied (deepcopy is unreliable); nothing changes them
    return copy.deepcopy(model)


def _fold_bn(model):
    """A copy of the model with BatchNorm folded into the convs (torch.fx), as torch.jit.freeze does; None
    when the model cannot be traced symbolically."""
    try:
        from torch.fx.experimental.optimization import fuse

        return fuse(copy.deepcopy(model))
    except Exception:  # noqa: BLE001
        return None


def _graph_conversion_ms(frozen, x, runs: int = 5) -> float:
    """The to_mkldnn/to_dense nodes the optimised graph runs, timed by the profiler (best of `runs`)."""
    import torch
    from torch.profiler import profile

    best: list[float] | None = None
    for _ in range(runs):
        with quiet_stderr(), torch.no_grad(), profile() as prof:
            frozen(x)
        t = [e.cpu_time_total / 1e3 for e in prof.events() if e.name in ("aten::to_mkldnn", "aten::to_dense")]
        best = t if best is None or len(best) != len(t) else [min(a, b) for a, b in zip(best, t)]
    return float(sum(best or []))


def _measure_conversions(prep: PreparedMode, budget_ms: float, cancel) -> tuple[float | None, str]:
    if prep.conversion_ms is not None:
        return prep.conversion_ms(), ""
    total, quality = 0.0, ""
    for _label, fn in prep.conversions:
        got = timed(fn, budget_ms, cancel)
        if got is None:
            return None, ""
        m, _ = got
        total += m.median_ms
        if m.quality == "noisy":
            quality = "noisy"
    return total, quality


# ---- the job ------------------------------------------------------------------------------------------
def iter_model(
    model: str,
    input_shape: tuple | str | None = None,
    mb: int | None = None,
    dtype: str = "f32",
    threads: int | None = None,
    run_opts=None,
    model_opts: ModelOptions | None = None,
    cancel: Callable[[], bool] | None = None,
    ctx=None,
    folder: str | None = None,
) -> Iterator:
    """The whole planner as a generator of events (runs in the GUI's measuring child, see core.child):
    ModelStarted(inventory), the sweep events of the per-layer table (iter_points), then per mode
    ModeStarted / ModeFinished, and ModelFinished(report). Raises InputError before any measurement."""
    import torch

    from explorer.core.jobs.events import PathFinished, PointSkipped
    from explorer.core.jobs.options import RunOptions
    from explorer.core.jobs.run import RunContext
    from explorer.core.jobs.sweep import iter_points
    from explorer.core.measure.host import validate_threads
    from explorer.core.paths.base import PATHS, TORCH_DTYPES
    from explorer.core.problem.spec import parse_dtype

    cancelled = cancel or (lambda: False)
    dtype = parse_dtype(dtype or "f32")
    mopts = (model_opts or ModelOptions()).validate()
    ropts = run_opts or RunOptions(paths=PATHS)
    if threads is not None:
        validate_threads(threads)
        import dataclasses

        ropts = dataclasses.replace(ropts, threads=threads)
    ropts = ropts.validate()
    if mb is not None and (not isinstance(mb, int) or isinstance(mb, bool) or mb < 1):
        raise InputError(f"--mb must be a positive whole number, got {mb!r}.", "mb")
    loaded = load_model(model, folder)
    shape = parse_input(input_shape) if isinstance(input_shape, str) else (tuple(input_shape) if input_shape else None)
    shape = shape or loaded.default_input
    if mb is not None:
        shape = (mb,) + tuple(shape[1:])
    check_input_rank(loaded.module, shape)
    if loaded.expected_input is not None and tuple(shape) != loaded.expected_input:
        raise InputError(f"this exported program takes an input of shape {','.join(map(str, loaded.expected_input))}"
                         f" (torch.export fixed it), not {','.join(map(str, shape))}.", "input")
    old_threads = torch.get_num_threads()
    if ropts.threads:
        torch.set_num_threads(ropts.threads)
    try:
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(shape, generator=gen).to(TORCH_DTYPES[dtype])
        net = loaded.module
        if dtype != "f32":
            net = _copy(net).to(TORCH_DTYPES[dtype])
        inv = take_inventory(net, x, loaded.label, dtype, loaded.kind)
        yield ModelStarted(inv)
        ctx = ctx or RunContext.current()
        started = time.strftime("%Y-%m-%dT%H:%M:%S")
        # ---- per layer: the batch machinery ------------------------------------------------------
        points = layer_points(inv)
        per_layer: dict[int, dict] = {i: {} for i in range(len(points))}
        current = {"i": -1}
        from explorer.core.jobs.events import PointStarted

        for ev in iter_points(points, ropts, cancelled, ctx):
            if isinstance(ev, PointStarted):
                current["i"] = ev.point.index
            elif isinstance(ev, PathFinished):
                per_layer[current["i"]][ev.result.path] = ev.result
            elif isinstance(ev, PointSkipped):
                pass
            yield ev
        summaries = [summarize_layer(lay, per_layer[i]) for i, lay in enumerate(inv.layers)]
        if mopts.predict and {"to_mkldnn", "jit_mkldnn"} & set(mopts.modes):
            for s in summaries:  # the MKLDNN modes' per-layer time: the mkldnn conv on a blocked input
                r = s.results.get("mkldnn")
                if cancelled() or s.layer.spec is None or r is None or r.status != "ok":
                    continue
                s.chained = measure_chained(s.layer.spec, ropts, ctx, cancelled)
        if cancelled():  # the rows measured so far are the report (the CSV keeps them)
            done = [s for s in summaries if s.results]
            yield ModelFinished(ModelReport(inv, done, [], torch.get_num_threads(), started), True)
            return
        # ---- end to end --------------------------------------------------------------------------
        with torch.no_grad():
            ref = net(x)
        ref = _dense(ref)
        results: list[ModeResult] = []
        reference = _reference(summaries) if mopts.predict else None
        seq_tensors: dict = {}  # per conv site, its own tensors for the in-order conv loop, shared by the modes
        for k, mode in enumerate(mopts.modes):
            if cancelled():
                break
            yield ModeStarted(mode, k, len(mopts.modes))
            before = time_reference(reference, cancelled) if reference is not None else None
            res = _run_mode(mode, net, x, dtype, ref, mopts, cancelled, inv, seq_tensors)
            if res is None:
                break
            if reference is not None and res.status == "ok" and not cancelled():
                d, res.host_drift_note = drift(reference, before, time_reference(reference, cancelled))
                res.host_drift_pct = None if d is None else 100.0 * d
                res.host_drift_ref = reference.label
            _predict(res, summaries, inv)
            for (li, path), ms in (res.conv_seq.per_layer.items() if res.conv_seq is not None else ()):
                if li is not None:
                    summaries[li].in_sequence.setdefault(path, ms)
            results.append(res)
            yield ModeFinished(res)
        _ratios(results, summaries)
        seq_tensors.clear()
        report = ModelReport(inv, summaries, results, torch.get_num_threads(), started)
        yield ModelFinished(report, cancelled())
    finally:
        torch.set_num_threads(old_threads)


def _run_mode(mode: str, net, x, dtype: str, ref, mopts: ModelOptions, cancel, inv=None,
              seq_tensors: dict | None = None) -> ModeResult | None:
    import numpy as np
    import torch

    from explorer.core.paths.base import is_unsupported, one_line

    res = ModeResult(mode)
    try:
        with torch.no_grad():
            prep = _prepare_mode(mode, net, x, dtype)
            out = prep.fn()
        res.max_abs_err, res.rel_err = compare_outputs(out, ref)
        del out
        tol = 1e-3 if dtype == "f32" else 5e-2
        if res.rel_err is not None and not res.rel_err <= tol:
            res.error = f"output differs from the NCHW model: max error {res.max_abs_err:.3g} ({res.rel_err:.2g} of its largest value)."
        rem_fn = seq = None
        if mopts.predict and not cancel():
            rem_fn = _remainder_fn(prep, res)
            if prep.graph_parts is not None:
                res.graph_convs = prep.graph_parts.n_convs
            res.graph_cut_error = prep.graph_cut_error
            if rem_fn is not None and inv is not None:
                seq = _conv_sequence(res, inv, {} if seq_tensors is None else seq_tensors, prep)
        if seq is not None:
            # the forward, its remainder and its convs in model order, interleaved round by round
            parts, minus = {"remainder": rem_fn, "forward": prep.fn}, None
            gp = prep.graph_parts
            if gp is not None:  # the graph's own parts (seq is its conv pass): each part's touches, taken off it
                parts = {"conv touches": gp.conv_touches, "remainder": rem_fn,
                         "remainder touches": gp.remainder_touches, "forward": prep.fn}
                minus = {"convs": "conv touches", "remainder": "remainder touches"}
            timing = time_sequence(seq, 2 * mopts.mode_budget_ms, mopts.min_samples, cancel, parts, minus)
            if timing is None:
                return None
            _fill_measured(res, timing.measurement, timing.parts_ms["forward"], timing.attempts)
            res.remainder_ms, res.remainder_quality = float(np.median(timing.parts_ms["remainder"])), timing.quality
            res.conv_seq, res.conv_seq_quality = timing, timing.quality
        else:
            with torch.no_grad():
                got = timed(prep.fn, mopts.mode_budget_ms, cancel, mopts.min_samples)
            if got is None:
                return None
            m, attempts = got
            _fill_measured(res, m, None, attempts)
            if rem_fn is not None:
                with torch.no_grad():
                    got = timed(rem_fn, mopts.mode_budget_ms, cancel, mopts.min_samples)
                if got is None:
                    return None
                res.remainder_ms, res.remainder_quality = got[0].median_ms, got[0].quality
        if mopts.predict and not cancel():
            res.convs_in_model_ms, res.convs_in_model_note = _convs_in_model(prep, mode)
            with torch.no_grad():
                res.conversion_ms, conv_q = _measure_conversions(prep, max(50.0, mopts.mode_budget_ms / 10), cancel)
            if conv_q == "noisy" and res.remainder_ms is not None:
                res.remainder_quality = "noisy"
    except Exception as exc:  # noqa: BLE001 - a mode the model cannot run is that mode's row
        res.status = "unsupported" if is_unsupported(exc) else "error"
        where = ""
        if mode == "to_mkldnn":
            try:
                import torch.utils.mkldnn

                from explorer.core.paths.base import TORCH_DTYPES

                mm = torch.utils.mkldnn.to_mkldnn(_copy(net), TORCH_DTYPES[dtype])
                where = _where(mm, lambda: mm(x.to_mkldnn()))
            except Exception:  # noqa: BLE001
                where = ""
        res.error = f"{type(exc).__name__}{where}: {one_line(exc)}"
    return res


def _fill_measured(res: ModeResult, m, forward_ms, attempts: int) -> None:
    """The mode's measured figures: of its own loop (forward_ms None), or of the forwards of the interleaved
    rounds (forward_ms: one per kept round), with the interference columns of the loop they came from."""
    import numpy as np

    from explorer.core.jobs.run import fill_quality

    if forward_ms is None:
        res.samples, res.measured_ms, res.iqr_ms = m.n, m.median_ms, m.iqr_ms
        res.min_ms, res.mean_ms, res.p25_ms, res.p75_ms = m.min_ms, m.mean_ms, m.p25_ms, m.p75_ms
    else:
        p25, p50, p75 = (float(v) for v in np.percentile(forward_ms, [25, 50, 75]))
        res.samples, res.measured_ms, res.iqr_ms = m.n, p50, p75 - p25
        res.min_ms, res.mean_ms, res.p25_ms, res.p75_ms = float(forward_ms.min()), float(forward_ms.mean()), p25, p75
    res.stop_reason, res.attempts = m.stop_reason, attempts
    fill_quality(res, m)


def _remainder_fn(prep: PreparedMode, res: ModeResult):
    """The mode's forward with every conv stubbed (built and run once), or None with res.predict_note saying why."""
    import torch

    from explorer.core.paths.base import one_line

    try:
        with torch.no_grad(), quiet_stderr():
            rem_fn = prep.remainder() if prep.remainder is not None else None
            if rem_fn is not None:
                rem_fn()
    except Exception as e:  # noqa: BLE001 - no prediction for this mode; its measurement stands
        res.predict_note = f"no prediction: the stubbed model for the remainder cannot run ({type(e).__name__}: {one_line(e)})"
        return None
    if rem_fn is None:
        res.predict_note = ("the convolutions are not modules here (TorchScript, an exported graph or an untraceable "
                            "model): the non-conv remainder cannot be measured")
    return rem_fn


def _conv_sequence(res: ModeResult, inv: Inventory, tensors: dict, prep: PreparedMode | None = None):
    """The mode's convs in model order (model_sequence), or None with res.conv_seq_note saying why. For
    jit_mkldnn with its graph cut (model_jit), the graph's own conv nodes: one site, one call, no layer."""
    from types import SimpleNamespace

    from explorer.core.model.sequence import Sequence
    from explorer.core.paths.base import one_line

    parts = prep.graph_parts if prep is not None else None
    if parts is not None:
        return Sequence(res.mode, [(None, "jit graph", SimpleNamespace(fn=parts.convs))])
    try:
        seq, why = build_sequence(res.mode, MODE_PATH[res.mode], inv, tensors)
    except Exception as e:  # noqa: BLE001 - the prediction falls back to the per-layer table
        seq, why = None, f"{type(e).__name__}: {one_line(e)}"
    if seq is None:
        res.conv_seq_note = f"convs not timed in model order: {why}"
    return seq


def _reference(summaries):
    try:
        return pick_reference(summaries)
    except Exception:  # noqa: BLE001 - no drift check (the dense path of that layer cannot be built)
        return None


def _convs_in_model(prep: PreparedMode, mode: str) -> tuple[float | None, str]:
    from explorer.core.model.inplace import convs_in_forward_ms

    try:
        return convs_in_forward_ms(prep.fn, prep.model, graph=(mode == "jit_mkldnn"))
    except Exception as e:  # noqa: BLE001 - a diagnostic column: its failure leaves the mode's figures as they are
        from explorer.core.paths.base import one_line

        return None, f"not read: {type(e).__name__}: {one_line(e)}"


def _predict(res: ModeResult, summaries: list[LayerSummary], inv: Inventory) -> None:
    if res.status != "ok" or res.remainder_ms is None:
        return
    path = MODE_PATH[res.mode]
    first = inv.sites[0].module if inv.sites else None
    conv = 0.0
    chained = 0
    for s in summaries:
        r = s.results.get(path)
        if r is None or r.status != "ok" or not r.median_ms:
            why = s.layer.error or (r.error if r is not None else f"path {path} was not measured")
            res.predict_note = f"no prediction: layer {s.layer.name} has no {path} time ({why})"
            return
        c = s.chained
        if res.mode in CHAINED_MODES and c is not None and c.status == "ok" and c.median_ms:
            # the first conv reorders the plain x.to_mkldnn() input (the mkldnn time); the rest get blocked input
            n_plain = 1 if first in s.layer.modules else 0
            conv += n_plain * r.median_ms + (s.layer.count - n_plain) * c.median_ms
            chained += s.layer.count - n_plain
        else:
            conv += s.layer.count * r.median_ms
    res.conv_alone_ms = conv
    seq = res.conv_seq
    res.conv_ms = seq.total_ms if seq is not None else conv
    res.predicted_ms = res.conv_ms + (res.conversion_ms or 0.0) + res.remainder_ms
    if res.graph_convs is not None and seq is not None:
        res.predict_note = (f"convs: the frozen graph's own {res.graph_convs} conv nodes (BatchNorm folded in) in "
                            f"its order, each on its real input, in one graph call ({seq.passes} passes), "
                            f"{res.conv_ms / conv:.2f}x the per-layer table's mkldnn/mkldnn_chained time; "
                            "remainder: the graph without its conv and conversion nodes, fed their real outputs; "
                            "each part reads its inputs hot, as inside the graph (each touched just before its "
                            "first use, the touches timed alone and taken off); "
                            "conversions: the graph's to_mkldnn/to_dense nodes (profiler)")
        return
    notes = [f"convs: timed in model order, each of the {inv.total} with its own tensors and the others in "
             f"between ({seq.passes} passes), {res.conv_ms / conv:.2f}x their per-layer table time"
             if seq is not None else (res.conv_seq_note or "convs: the per-layer table's times")]
    if res.mode == "to_mkldnn" and chained:
        notes.append(f"{chained} of {inv.total} on mkldnn_chained (the MKLDNN model passes blocked outputs conv "
                     "to conv), the rest on mkldnn")
    if res.mode == "jit_mkldnn":
        if res.graph_cut_error:
            notes.append(f"the frozen graph could not be cut into its parts ({res.graph_cut_error}), so eager "
                         "stand-ins are timed")
        notes.append(f"{chained} of {inv.total} on mkldnn_chained (blocked input, as the graph passes it), the rest "
                     "on mkldnn; remainder of the to_mkldnn model with BatchNorm folded (ReLU6-like modules as "
                     "the jit's flat in-place aten op); conversions: the graph's to_mkldnn/to_dense nodes (profiler)")
    res.predict_note = "; ".join(notes)


def _ratios(results: list[ModeResult], summaries: list[LayerSummary]) -> None:
    base = next((r for r in results if r.mode == "nchw"), None)
    for r in results:
        path = MODE_PATH[r.mode]
        faster = total = 0
        slower = []
        noisy_rows = 0
        for s in summaries:
            d, p = s.results.get("dense"), s.results.get(path)
            if d is None or p is None or d.status != "ok" or p.status != "ok":
                continue
            total += s.layer.count
            noisy_rows += d.noisy or p.noisy
            if p.median_ms < d.median_ms:
                faster += s.layer.count
            elif path != "dense":
                slower.append((p.median_ms - d.median_ms) * s.layer.count)
                slower[-1] = (slower[-1], _layer_label(s.layer, s is summaries[0]))
        r.convs_faster, r.convs_total = (faster, total) if path != "dense" else (None, total)
        r.slower_layers = [lab for _, lab in sorted(slower, reverse=True)]
        reasons = []
        if base is not None and r.status == "ok" and base.status == "ok" and r.measured_ms:
            r.speedup = base.measured_ms / r.measured_ms
            if r.noisy or base.noisy:
                reasons.append("a measured loop is noisy")
            if r.predicted_ms and base.predicted_ms:
                r.predicted_speedup = base.predicted_ms / r.predicted_ms
                if "noisy" in (r.remainder_quality, base.remainder_quality):
                    reasons.append("a remainder loop is noisy")
                if "noisy" in (r.conv_seq_quality, base.conv_seq_quality):
                    reasons.append("a loop of the convs in model order is noisy")
        if noisy_rows:
            reasons.append(f"{noisy_rows} per-layer rows are noisy")
        drifted = [(m, "" if m is r else " around the model as it is") for m in ((r,) if base is r else (r, base))
                   if m is not None and m.host_drift_pct is not None and abs(m.host_drift_pct) > 100 * DRIFT_LIMIT]
        if drifted:
            how = " and ".join(f"{m.host_drift_pct:+.0f}%{where or (' here' if len(drifted) > 1 else '')}"
                               for m, where in drifted)
            reasons.append(f"{drifted[0][0].host_drift_ref} ran {how}, against its per-layer table "
                           "row (the machine's speed or the process's memory state changed)")
        r.uncertain = bool(reasons)
        r.uncertain_reason = "; ".join(reasons)


def _layer_label(layer: Layer, first: bool = False) -> str:
    s = layer.spec
    k = f"{s.kh}x{s.kw}" if s is not None else "?"
    what = f"{layer.name} ({k}{', dw' if s is not None and s.g > 1 and s.g == s.ic else ''}"
    what += f", x{layer.count})" if layer.count > 1 else ")"
    if s is not None and first:
        what = f"the {k} stem ({layer.name})"
    return what


def mode_line(r: ModeResult) -> str:
    """One mode in one line: '~' and 'uncertain' when a figure behind it is noisy."""
    label = MODE_LABEL[r.mode]
    if r.status != "ok":
        return f"{label}: cannot run: {r.error}"
    if r.mode == "nchw":
        pred = f" (predicted {r.predicted_ms:.4g} ms)" if r.predicted_ms else ""
        line = f"{label}: {'~' if r.noisy or r.uncertain else ''}{r.measured_ms:.4g} ms per forward{pred}"
        if r.uncertain:
            return line + f" (uncertain: {r.uncertain_reason})"
        return line + (f" (noisy: {r.quality_reason})" if r.noisy else "")
    t = "~" if r.uncertain else ""
    s = r.speedup
    how = f"{s:.2f}x faster" if s >= 1 else f"{1 / s:.2f}x slower"
    pred = f" (predicted {r.predicted_speedup:.2f}x)" if r.predicted_speedup else " (no prediction)"
    line = f"{label}: {t}{how} end to end{pred}"
    if r.convs_total:
        line += f"; {r.convs_faster} of {r.convs_total} convs faster"
        if r.slower_layers:
            names = ", ".join(r.slower_layers[:2]) + (f" and {len(r.slower_layers) - 2} more" if len(r.slower_layers) > 2 else "")
            line += f", {names} slower" if len(r.slower_layers) <= 2 else f", slower: {names}"
    if r.uncertain:
        line += f" (uncertain: {r.uncertain_reason})"
    if r.error:
        line += f"; {r.error}"
    return line


def answer_line(report: ModelReport) -> str:
    runs = [r for r in report.modes if r.mode != "nchw" and r.status == "ok" and r.speedup]
    if not runs:
        return "no mode other than the model as it is could run: keep it as it is."
    best = max(runs, key=lambda r: r.speedup)
    if best.speedup < 1:
        return f"keep the model as it is: every mode is slower; the closest is {mode_line(best)}"
    return mode_line(best)


# ---- CSV ------------------------------------------------------------------------------------------------
MODEL_COLUMNS_HEAD = ("kind", "model", "input_shape", "count", "modules", "best_path", "best_ms", "margin",
                      "mode", "measured_ms", "predicted_ms", "speedup", "predicted_speedup", "conv_ms",
                      "conv_alone_ms", "conv_seq_quality", "convs_in_model_ms", "in_sequence_ms", "conversion_ms", "remainder_ms", "remainder_quality", "host_drift_pct", "rel_err", "convs_faster", "convs_total", "uncertain",
                      "uncertain_reason", "note")


def model_columns() -> tuple[str, ...]:
    from explorer.core.report.results import CSV_COLUMNS

    return MODEL_COLUMNS_HEAD + tuple(c for c in CSV_COLUMNS if c not in MODEL_COLUMNS_HEAD)


def _cell(v) -> str:
    from explorer.core.report.results import csv_cell as cell

    return cell(v)


def layer_row(inv: Inventory, s: LayerSummary) -> dict:
    lay = s.layer
    row: dict = {}
    if lay.spec is not None:
        from explorer.core.report.results import Result

        row.update(Result(spec=lay.spec, path="", threads=0).row())
        for k in ("path", "threads", "status", "samples"):
            row[k] = ""
    row.update(kind="layer", model=inv.model, input_shape="x".join(map(str, lay.input_shape)), count=lay.count,
               modules=";".join(lay.modules), best_path=s.best_path, best_ms=s.best_ms, margin=s.margin,
               name=lay.name, desc=lay.desc, dtype=inv.dtype, status="ok" if not lay.error else "skipped",
               error=lay.error, quality="noisy" if s.noisy else "")
    return {k: _cell(v) if not isinstance(v, str) else v for k, v in row.items()}


def layer_path_row(inv: Inventory, lay: Layer, result, in_sequence: float | None = None) -> dict:
    row = dict(result.row())
    row.update(kind="layer_path", model=inv.model, input_shape="x".join(map(str, lay.input_shape)),
               count=str(lay.count), modules=";".join(lay.modules), in_sequence_ms=_cell(in_sequence))
    return row


def mode_row(inv: Inventory, r: ModeResult, threads: int | None = None) -> dict:
    row = {"kind": "mode", "model": inv.model, "input_shape": "x".join(map(str, inv.input_shape)),
           "dtype": inv.dtype, "mode": r.mode, "name": r.mode, "path": MODE_PATH[r.mode],
           "median_ms": r.measured_ms, "threads": threads, "count": inv.total,
           "note": "; ".join(n for n in (r.predict_note, r.convs_in_model_note and
                                         f"convs in model: {r.convs_in_model_note}", r.host_drift_note) if n)}
    for k in ("status", "error", "samples", "measured_ms", "iqr_ms", "min_ms", "mean_ms", "p25_ms", "p75_ms",
              "stop_reason", "max_abs_err", "rel_err", "conv_ms", "conv_alone_ms", "conv_seq_quality", "convs_in_model_ms", "conversion_ms", "remainder_ms", "remainder_quality",
              "host_drift_pct", "predicted_ms",
              "speedup", "predicted_speedup", "convs_faster", "convs_total", "uncertain", "uncertain_reason",
              "quality", "quality_reason", "samples_used", "attempts", "runq_wait_pct", "faults_per_call",
              "ctx_switches_per_call", "cpu_pct", "steal_pct", "other_cpu_pct", "slowdown_pct", "loadavg"):
        row[k] = getattr(r, k)
    return {k: _cell(v) for k, v in row.items()}


def report_rows(report: ModelReport) -> list[dict]:
    """Every row of the model CSV: layers, then (layer, path) rows, then modes."""
    inv = report.inventory
    rows = [layer_row(inv, s) for s in report.layers]
    for s in report.layers:
        for r in s.results.values():
            rows.append(layer_path_row(inv, s.layer, r, s.in_sequence.get(r.path)))
        if s.chained is not None:
            rows.append(layer_path_row(inv, s.layer, s.chained, s.in_sequence.get(s.chained.path)))
    rows += [mode_row(inv, r, report.threads) for r in report.modes]
    return rows


def rows_to_text(rows: list[dict]) -> str:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=model_columns(), extrasaction="ignore", lineterminator="\n", restval="")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_model_csv(path, rows: list[dict]) -> None:
    from explorer.core.files import atomic_write_text

    atomic_write_text(path, rows_to_text(rows))


class ModelCsvSink:
    """The model CSV rewritten atomically as rows arrive (layer_path rows while measuring, the rest at the end)."""

    def __init__(self, path):
        self.path = path
        self.rows: list[dict] = []

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self.flush()

    def flush(self) -> None:
        if self.path:
            write_model_csv(self.path, self.rows)

    def replace(self, rows: list[dict]) -> None:
        self.rows = list(rows)
        self.flush()


__all__ = [
    "MODES", "MODE_PATH", "LoadedModel", "load_model", "parse_input", "take_inventory", "Inventory", "Layer",
    "ConvSite", "ModelOptions", "iter_model", "ModelStarted", "ModeStarted", "ModeFinished", "ModelFinished",
    "ModeResult", "ModelReport", "LayerSummary", "report_rows", "write_model_csv", "ModelCsvSink", "mode_line",
    "answer_line", "model_columns",
]
