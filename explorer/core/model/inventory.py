"""The inventory: one forward pass that sees the real shapes and records every convolution (ConvSite),
grouped into distinct layers (Layer) measured once each; the benchdnn spec of each layer."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import InputError
from explorer.core.model.surgery import CONV_TYPES, quiet_stderr


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
        if t in CONV_TYPES:
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
    from explorer.core.paths.base import one_line

    return InputError(f"the model raised inside forward: {type(exc).__name__}: {one_line(exc)}", "model")


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
