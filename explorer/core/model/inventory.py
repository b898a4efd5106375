"""The inventory: one forward pass that sees the real shapes and records every convolution (ConvSite),
grouped into distinct layers (Layer) measured once each; the benchdnn spec of each layer."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.core.errors import InputError
from explorer.core.model.surgery import CONV_TYPES, is_conv_module, is_transposed_conv, own_forward, quiet_stderr


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
    owner: str = ""  # class of the module it runs in (its conv module, or the module calling F.conv*d)
    stubbable: bool = True  # a conv module (isinstance of torch's _ConvNd): the remainder can stub it out
    own_forward: str = ""  # what a conv subclass's own forward adds (surgery.own_forward), "" for torch's
    # the input's strides when it arrives not contiguous (SegFormer's transpose(1, 2).view(...) before its convs),
    # () when contiguous: torch copies such an input inside the conv, a cost a contiguous input never shows
    input_strides: tuple = ()
    functional: bool = False  # an F.conv*d / F.conv_transpose*d call, not a conv module's
    input_profile: tuple = ()  # the input the model really feeds it (activations.profile.InputProfile), or ()


@dataclass
class Layer:
    """A distinct convolution: one spec, measured once, counted `count` times."""

    spec: object  # ConvSpec named after its first module, or None when it cannot be measured here
    modules: list[str]
    kind: str
    input_shape: tuple
    desc: str  # benchdnn descriptor (also for the ones that cannot be measured)
    error: str = ""  # why it is not measured ("" when it is)
    input_profile: tuple = ()  # its first site's InputProfile, or ()

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
    input_label: str = ""  # every input's shape ("1x16000 + 1x16000"), when there are several

    @property
    def total(self) -> int:
        return len(self.sites)

    def counts_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.sites:
            out[s.kind] = out.get(s.kind, 0) + 1
        return out

    def summary(self) -> str:
        shape = self.input_label or "x".join(map(str, self.input_shape))
        return (f"{self.model}: {self.total} convolutions ({kinds_text(self.sites)}), {len(self.layers)} distinct, "
                f"input {shape} {self.dtype}")

    def inside_sites(self) -> list[ConvSite]:
        """The convs that are not stubbed, so run inside the remainder: F.conv*d calls inside another module's
        forward, and transposed convs (no per-layer path times them)."""
        return [s for s in self.sites if not s.stubbable]

    def functional_sites(self) -> list[ConvSite]:
        """The F.conv*d calls inside another module's forward (not conv modules)."""
        return [s for s in self.sites if not s.stubbable and not s.transposed]

    def transposed_sites(self) -> list[ConvSite]:
        return [s for s in self.sites if s.transposed]


def site_kind(s: ConvSite) -> str:
    """The words every count of the plan uses for one conv: Conv1d (a conv module), F.conv1d (a functional
    call inside another module), ConvTranspose1d (a transposed conv module) or F.conv_transpose1d."""
    nd = s.kind[len("Conv"):]  # "1d"
    if s.transposed:
        return f"F.conv_transpose{nd}" if s.functional else f"ConvTranspose{nd}"
    return f"F.conv{nd}" if s.functional else s.kind


def kinds_text(sites) -> str:
    """How many of each kind (site_kind), modules first, then calls, then transposed ones: '98 Conv1d, 1 F.conv1d,
    1 ConvTranspose1d'. The inventory, the notes and the answer all count with it, so their numbers add up."""
    out: dict[str, int] = {}
    for s in sorted(sites, key=lambda s: (s.transposed, s.functional)):  # stable: first seen within a group
        k = site_kind(s)
        out[k] = out.get(k, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in out.items())


def _tuple(v, n: int) -> tuple:
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    return v * n if len(v) == 1 and n > 1 else v


def _record_convs(model, inp, keep=None) -> list[tuple]:
    """Every aten.convolution call of one forward (module convs and F.conv*d calls alike): (input shape,
    weight shape, weight ptr, args..., the innermost module running it, as (path, module), strides, the input's
    profile). `keep` (activations.kept.KeptInputs) is offered each call's real input."""
    import torch

    from explorer.core.model.activations.profile import profile_of
    from torch.utils._python_dispatch import TorchDispatchMode

    calls: list[tuple] = []
    conv = torch.ops.aten.convolution.default
    stack: list[tuple[str, object]] = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is conv:
                inp, w, b, stride, padding, dilation, transposed, _, groups = args[:9]
                prof = profile_of(inp)
                calls.append((tuple(inp.shape), tuple(w.shape), w.data_ptr(), b is not None, tuple(stride),
                              tuple(padding), tuple(dilation), bool(transposed), int(groups), _owner(stack),
                              _strides(inp), prof or ()))
                if keep is not None:
                    keep.offer(len(calls) - 1, inp, args[1:9], prof)
            return func(*args, **(kwargs or {}))

    hooks = []
    try:
        if isinstance(model, torch.nn.Module) and not isinstance(model, torch.jit.ScriptModule):
            for name, m in model.named_modules():
                if name:
                    hooks.append(m.register_forward_pre_hook(lambda _m, _a, n=name: stack.append((n, _m))))
                    hooks.append(m.register_forward_hook(lambda _m, _a, _o: _pop(stack)))
        with torch.no_grad(), Recorder():
            _call(model, inp)
    finally:
        for h in hooks:
            h.remove()
    return calls


def _strides(t) -> tuple:
    """A dense tensor's strides when it is not contiguous and holds no repeated element (no 0 stride), else ()."""
    import torch

    if getattr(t, "layout", None) != torch.strided or t.is_contiguous():
        return ()
    if any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape)):
        return ()  # an expanded view: no copy of it is laid out the same
    return tuple(t.stride())


def _pop(stack: list) -> None:
    """A forward hook's body: it must return None, or it would replace the module's output."""
    if stack:
        stack.pop()


def _owner(stack: list) -> tuple[str, object] | None:
    """The conv module running (the innermost _ConvNd on the stack), else the innermost module, else None."""
    for name, m in reversed(stack):
        if is_conv_module(m):
            return name, m
    return stack[-1] if stack else None


def _call(model, inp):
    return inp.call(model) if hasattr(inp, "call") else model(inp)


def _record_convs_profiler(model, inp) -> list[tuple]:
    """The same from the profiler (TorchScript: the dispatch mode does not see inside the interpreter)."""
    import torch
    from torch.profiler import profile

    with quiet_stderr(), torch.no_grad(), profile(record_shapes=True) as prof:
        _call(model, inp)
    calls = []
    for e in prof.events():
        if e.name != "aten::convolution":
            continue
        shapes, concrete = e.input_shapes, getattr(e, "concrete_inputs", None) or []
        if len(shapes) < 2 or len(concrete) < 9:
            continue
        stride, padding, dilation, transposed, _, groups = concrete[3:9]
        calls.append((tuple(shapes[0]), tuple(shapes[1]), None, bool(shapes[2]), tuple(stride), tuple(padding),
                      tuple(dilation), bool(transposed), int(groups), None, (), ()))
    return calls


def _conv_modules(model) -> list[tuple[str, object]]:
    out = []
    for name, m in model.named_modules():
        t = getattr(m, "original_name", None) or type(m).__name__
        if is_conv_module(m) or t in CONV_TYPES:
            out.append((name, m))
    return out


def forward_error(model, exc: BaseException) -> InputError:
    """A model that raised inside forward: that error, in one line."""
    from explorer.core.paths.base import one_line

    return InputError(f"the model raised inside forward: {type(exc).__name__}: {one_line(exc)}", "model")


def take_inventory(model, inp, label: str = "model", dtype: str = "f32", kind: str = "callable",
                   keep=None) -> Inventory:
    """Run the model once and list every convolution, grouped into distinct layers. `inp` is the model's
    input (a ModelInput, or one tensor), never checked against the convs. `keep` (KeptInputs) gets the real
    inputs of the convs fed subnormals. Raises InputError."""

    try:
        if kind == "torchscript":
            calls = _record_convs_profiler(model, inp)
        else:
            calls = _record_convs(model, inp, keep)
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - the user's forward failed: one line
        raise forward_error(model, e) from None
    names: dict[int, str] = {}
    for n, p in model.named_parameters():
        names.setdefault(p.data_ptr(), n[: -len(".weight")] if n.endswith(".weight") else n)
    mods = _conv_modules(model)
    unused = list(mods)
    sites: list[ConvSite] = []
    for i, (ishape, wshape, ptr, bias, stride, padding, dilation, transposed, groups, owner, in_strides,
            prof) in enumerate(calls):
        nd = len(ishape) - 2
        stubbable, cls, extra, functional = True, "", "", False
        if owner is not None and is_conv_module(owner[1]):
            name, cls = owner[0], type(owner[1]).__name__  # a conv module, whatever its forward computes the weight from
            extra = own_forward(owner[1])
            stubbable = not is_transposed_conv(owner[1])  # not timed per layer: it stays in the remainder
        else:
            name = names.get(ptr) if ptr is not None else None
            if ptr is not None:  # eager: F.conv*d inside another module's forward (or the model's own)
                stubbable, functional = False, True
                cls = type(owner[1] if owner is not None else model).__name__
                name = name if name is not None else f"{owner[0] if owner is not None else 'forward'}#conv{i}"
        if name is None and ptr is None:  # TorchScript: the next conv submodule whose weight has this shape
            for j, (n, m) in enumerate(unused):
                w = getattr(m, "weight", None)
                if w is not None and tuple(w.shape) == wshape:
                    name, cls = n, getattr(m, "original_name", None) or type(m).__name__
                    unused.pop(j)
                    break
        if name is None:
            name = f"conv#{i}"
        sites.append(ConvSite(name, f"Conv{nd}d", ishape, wshape, _tuple(stride, nd), _tuple(padding, nd),
                              _tuple(dilation, nd), groups, bias, transposed, cls, stubbable, extra, in_strides,
                              functional, tuple(prof)))
    if not sites:
        raise InputError(f"{label} has no convolution (Conv1d/2d/3d) in its forward pass: nothing to plan.", "model")
    layers: dict[tuple, Layer] = {}
    for s in sites:
        spec, desc, err = site_spec(s, dtype)
        # One layer per shape: ResNet-50's 53 convs are timed as its distinct ones. Whatever else decides a conv's
        # time joins this key: a conv fed subnormals times apart from its same-shape twins (profile.timing_key);
        # its input's scale does not.
        key = (desc, s.bias, dtype, s.kind) + _timing_key(s.input_profile)
        if key in layers:
            layers[key].modules.append(s.module)
        else:
            layers[key] = Layer(spec, [s.module], s.kind, s.input_shape, desc, err, s.input_profile)
    shape = tuple(inp.shape) if hasattr(inp, "shape") else ()
    label_in = inp.label if hasattr(inp, "label") and len(inp.tensors()) > 1 else ""
    return Inventory(label, shape, dtype, sites, list(layers.values()), label_in)


def _timing_key(profile) -> tuple:
    from explorer.core.model.activations.profile import as_profile

    p = as_profile(profile)
    return p.timing_key() if p is not None else ()


def site_spec(s: ConvSite, dtype: str):
    """(ConvSpec or None, benchdnn descriptor, reason it is not measured)."""
    from explorer.core.errors import SpecError
    from explorer.core.problem.spec import ConvSpec

    if s.transposed:
        return None, "", "a transposed convolution: not measured (only forward convolutions are)."
    nd = len(s.input_shape) - 2
    n, c = s.input_shape[:2]
    oc, k = s.weight_shape[0], s.weight_shape[2:]
    dil = [d - 1 for d in s.dilation]  # benchdnn's dilation is 0-based
    if nd == 3:
        d, h, w = s.input_shape[2:]
        fields = dict(ndims=5, id=d, ih=h, iw=w, kd=k[0], kh=k[1], kw=k[2], sd=s.stride[0], sh=s.stride[1],
                      sw=s.stride[2], pd=s.padding[0], ph=s.padding[1], pw=s.padding[2], dd=dil[0], dh=dil[1], dw=dil[2])
    elif nd == 1:  # benchdnn's 1-D problem: w-values only, h kept at 1
        fields = dict(ndims=3, ih=1, kh=1, sh=1, ph=0, dh=0, iw=s.input_shape[2], kw=k[0], sw=s.stride[0],
                      pw=s.padding[0], dw=dil[0])
    elif nd == 2:
        fields = dict(ih=s.input_shape[2], iw=s.input_shape[3], kh=k[0], kw=k[1], sh=s.stride[0], sw=s.stride[1],
                      ph=s.padding[0], pw=s.padding[1], dh=dil[0], dw=dil[1])
    else:
        return None, "", f"a {nd}-D convolution: not measured (the paths take 1-D, 2-D and 3-D ones)."
    try:
        spec = ConvSpec(mb=n, g=s.groups, ic=c, oc=oc, bias=s.bias, dtype=dtype, name=s.module, **fields).validate()
    except SpecError as e:
        return None, "", str(e)
    return spec, spec.desc, ""
