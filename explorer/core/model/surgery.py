"""Module surgery on a model: convs stubbed by their real outputs or wrapped, submodules replaced, a
to_mkldnn model made to run as the jit graph would; outputs back to dense and compared; where a forward
failed; fd 2 silenced. Shared by the inventory, the modes and the in-model conv clock (model.inplace)."""

from __future__ import annotations

import contextlib
import copy
import math
import os
import sys
from typing import Callable

CONV_TYPES = ("Conv1d", "Conv2d", "Conv3d")
MKLDNN_CONV_TYPES = ("MkldnnConv1d", "MkldnnConv2d", "MkldnnConv3d")


def is_conv_module(m) -> bool:
    """A convolution module by what it is: any subclass of torch's conv base (same-padding and
    weight-standardised convs, a user's own Conv2d), or a to_mkldnn conv. Not a wrapper holding a conv."""
    from torch.nn.modules.conv import _ConvNd

    return isinstance(m, _ConvNd) or type(m).__name__ in MKLDNN_CONV_TYPES


def is_transposed_conv(m) -> bool:
    """A ConvTranspose1d/2d/3d (or a subclass): the per-layer paths time forward convs only, so it is never
    stubbed; it runs inside the remainder, measured there in each mode."""
    from torch.nn.modules.conv import _ConvTransposeNd

    return isinstance(m, _ConvTransposeNd)


def own_forward(m) -> str:
    """'' for a conv module running torch's own forward; else what it adds, in words, for a note."""
    from torch import nn

    base = next((b for b in (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                             nn.ConvTranspose3d) if isinstance(m, b)), None)
    if base is None or type(m).forward is base.forward:
        return ""
    kids = [n for n, _ in m.named_children()]
    return f"its own forward{' with child module ' + ', '.join(repr(k) for k in kids) if kids else ''}"


def touch_in_place(t) -> None:
    """Read and write every element of `t`, changing none, so that what reads it next finds it in the caches,
    as a conv's output is when the next layer reads it inside a forward. An MKLDNN tensor takes no aten
    hardtanh_; its own in-place multiply by one does the same. A tensor whose elements share memory (an
    expanded view) is left as it is: an in-place op refuses it."""
    import torch

    if not isinstance(t, torch.Tensor):
        return
    if t.is_mkldnn:
        t.mul_(1.0)  # oneDNN's eltwise: the same values, but a -0.0 comes back +0.0
    elif t.is_floating_point() and torch._debug_has_internal_overlap(t) == 0:
        torch.nn.functional.hardtanh_(t, -math.inf, math.inf)  # every bit kept: nan, inf, -0.0, subnormals


def _stub_module(cached, pads=()):
    from torch import nn

    class ConvStub(nn.Module):
        """A conv replaced by its real output: the model runs everything but the convs. A same-padding conv's
        padding child modules (efficientnet_pytorch's static_padding) still run on its input: they are not
        the conv, so they belong to the remainder. The output is touched before it is returned: inside
        the forward the conv has just written it, so the next op reads it from the caches, while a kept
        output untouched since the last round comes from memory. RepViT mb8's 126 kept outputs are 227 MiB:
        read cold, its channels_last remainder was 16-18 ms above the forward less its convs, touched 2-3 ms
        (BENCHMARKS §18). What the touches cost is timed alone (Stubbed.touches) and taken off."""

        def __init__(self, out):
            super().__init__()
            self.out = out
            self.pads = nn.ModuleList(pads)

        def forward(self, *args, **kwargs):
            for p in self.pads:
                p(args[0])
            touch_in_place(self.out)
            return self.out

    return ConvStub(cached)


def _stubs(model) -> list:
    return [m for m in model.modules() if type(m).__name__ == "ConvStub"]


class Stubbed:
    """A model's forward with its convs stubbed (stub_convs), and the same stubs' touches alone
    (`touches`): what the hot stubs add to the forward, to be taken off it round by round."""

    def __init__(self, model, call: Callable[[], object]):
        self.call = call
        self.outs = [s.out for s in _stubs(model)]

    def __call__(self):
        return self.call()

    def touches(self) -> None:
        for t in self.outs:
            touch_in_place(t)


def stubbed_forward(model, call: Callable[[], object]) -> Stubbed | None:
    """`model` (in place) with every conv stubbed by the output it gave in `call()`, as a Stubbed running
    `call`; None when no conv could be stubbed."""
    return Stubbed(model, call) if stub_convs(model, call) else None


def padding_children(m) -> list:
    """The padding modules a conv subclass holds (nn.ZeroPad2d and kin), run by its own forward before the conv."""
    from torch.nn.modules import padding

    kinds = tuple(getattr(padding, n) for n in ("_ConstantPadNd", "_ReflectionPadNd", "_ReplicationPadNd",
                                                "_CircularPadNd") if hasattr(padding, n))
    return [c for c in m.children() if isinstance(c, kinds)] if own_forward(m) else []


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
    """Every forward conv module's path (is_conv_module, not transposed), outermost only: a conv inside a conv
    module is part of it."""
    out: list[str] = []
    for name, m in model.named_modules():
        if name and is_conv_module(m) and not any(name.startswith(p + ".") for p in out):
            out.append(name)
    return [p for p in out if not is_transposed_conv(model.get_submodule(p))]


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
            set_submodule(model, p, _stub_module(store[p], padding_children(originals[p])))
        else:
            set_submodule(model, p, originals[p])
    return sum(1 for p in paths if p in store)


def dense_output(out):
    import dataclasses

    import torch

    if isinstance(out, torch.Tensor):
        return out.to_dense() if out.layout == torch._mkldnn else out
    if isinstance(out, (tuple, list)):
        return type(out)(dense_output(o) for o in out) if not hasattr(out, "_fields") else type(out)(*map(dense_output, out))
    if isinstance(out, dict):
        return {k: dense_output(v) for k, v in out.items()}
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        return {f.name: dense_output(getattr(out, f.name)) for f in dataclasses.fields(out)}
    return out


def flat_tensors(out) -> list:
    """Every tensor leaf of an output, in order: tensors, tuples, lists, dicts (transformers' ModelOutput is
    one), dataclasses and any nesting of them."""
    import dataclasses

    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_tensors(o)]
    if isinstance(out, dict):
        return [t for v in out.values() for t in flat_tensors(v)]
    if dataclasses.is_dataclass(out) and not isinstance(out, type):
        return [t for f in dataclasses.fields(out) for t in flat_tensors(getattr(out, f.name))]
    return []


def flat_output_module(model, kwarg_names: tuple = ()):
    """The model returning a flat tuple of its output's tensor leaves (what torch.jit.trace can hold: it refuses
    dicts and dataclasses), called with positional inputs and then the keyword inputs named `kwarg_names`."""
    from torch import nn

    class FlatOutput(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, *args):
            n = len(args) - len(kwarg_names)
            return tuple(flat_tensors(self.model(*args[:n], **dict(zip(kwarg_names, args[n:])))))

    return FlatOutput()


_DENORMAL_SCALE = 1.1754943508222875e-38 / 1.1920928955078125e-07  # torch.finfo(torch.float32).tiny / .eps


# How far a mode's output may be from the NCHW model's (compare_outputs' rel_err: max abs error / max |ref|)
# before it is a wrong output, by the dtype the mode computes in. f32 and bf16 are the values the planner has
# compared with since it was written (a real model's modes read 1e-6..1e-4 in f32, tests/core/model); f16
# and int8 follow the same rule from their own precision. The `int8` mode (modern.int8) is gated by int8's.
TOLERANCE = {
    # 1e-3: the modes run the same f32 maths in another summation order (oneDNN's blocked kernels, inductor,
    # the frozen graph's folded BatchNorm); that moves each output by a few eps (2^-23) times the layer's
    # depth, far below 1e-3, while a wrong kernel or layout is off by O(1).
    "f32": 1e-3,
    # 5e-2: bf16 keeps 8 bits (eps 2^-7 = 7.8e-3) and rounds every layer's output; 5e-2 is 6.4 of its eps,
    # what autocast_bf16 and a bf16 plan stay within against the f32/bf16 reference.
    "bf16": 5e-2,
    # 6.25e-3: bf16's rule (6.4 eps) at f16's 11 bits (eps 2^-10 = 9.8e-4).
    "f16": 6.25e-3,
    # 1e-1: a per-tensor s8 scale has 127 steps a side (one step 7.9e-3 of the range); a quantized net
    # rounds at every layer, so about 13 steps, an allowance by that rule, not measured here.
    "int8": 1e-1,
}


def wrong_output(max_abs_err: float | None, rel_err: float | None, dtype: str) -> str:
    """Why a mode's output is wrong ("" when it is right, or could not be compared): NaN or inf anywhere in
    it (the error is then NaN or inf), or an error beyond its dtype's TOLERANCE."""
    import math

    if rel_err is None:
        return ""
    if not math.isfinite(rel_err) or max_abs_err is None or not math.isfinite(max_abs_err):
        return (f"output holds NaN or inf: max error {max_abs_err} against the NCHW model; a wrong output is "
                "not timed.")
    tol = TOLERANCE.get(dtype, TOLERANCE["f32"])
    if rel_err > tol:
        return (f"output differs from the NCHW model: max error {max_abs_err:.3g} ({rel_err:.2g} of its largest "
                f"value, beyond {dtype}'s {tol:g}); a wrong output is not timed.")
    return ""


# How many one-ulp moves of the weights measure a model's own sensitivity (Float64Reference.moved_outputs), and how
# far beyond the farthest of them a right mode may be. timm's efficientnetv2_rw_s with random weights (new ones in
# every process): one CLI run called its channels_last and jit_mkldnn wrong (15% and 44% off the model as it is)
# by the float64 rule alone; in three seeds of its weights, one-ulp moves moved its output 2-34%, and jit_mkldnn
# read 0.1-33% off the model as it is, in seed 1 3.4 times the model's own float64 distance and 0.97 times its
# farthest move (BENCHMARKS §18). A wrong kernel or layout is off by O(1).
SENSITIVITY_DRAWS = 3
SENSITIVITY_FACTOR = 2.0


class Float64Reference:
    """The f32 model run once in float64, on first need: the truth an f32 mode is judged against when it
    differs from the model as it is beyond f32's tolerance. Some models amplify f32 rounding through their
    layers (timm's efficientnetv2_rw_s with random weights: the model as it is reads 3.4% off its float64
    output, channels_last 1.7%), so "differs from the NCHW model" alone does not make a mode wrong."""

    def __init__(self, module, x):
        self._module, self._x, self._out, self.why = module, x, None, ""
        self._moved: list | None = None

    def output(self):
        """The float64 output (None when the model cannot run in float64: `why` says why)."""
        import torch

        from explorer.core.paths.base import one_line

        if self._out is None and not self.why:
            try:
                with torch.no_grad():
                    model = copy_model(self._module).double()
                    self._out = dense_output(self._x.map(lambda t: t.double()).call(model))
            except Exception as e:  # noqa: BLE001 - an op with no float64 kernel: the f32 gate stands
                self.why = f"{type(e).__name__}: {one_line(e)}"
        return self._out

    def moved_outputs(self, draws: int = SENSITIVITY_DRAWS) -> list:
        """The f32 model's outputs with every weight and float buffer moved by one f32 ulp, up or down or not at
        all, at random (seeded, `draws` of them): what another f32 computation of the same model (a folded
        BatchNorm, another summation order) may give. [] when the model cannot be copied or run so."""
        import torch

        if self._moved is None:
            self._moved = []
            try:
                with torch.no_grad():
                    for k in range(draws):
                        gen = torch.Generator().manual_seed(k)
                        model = copy_model(self._module)
                        for t in list(model.parameters()) + [b for b in model.buffers() if b.is_floating_point()]:
                            step = torch.randint(-1, 2, t.shape, generator=gen).to(t.dtype)
                            t.mul_(1 + step * torch.finfo(t.dtype).eps)
                        self._moved.append(dense_output(self._x.call(model)))
            except Exception:  # noqa: BLE001 - no such copy (a TorchScript file): the float64 rule alone
                self._moved = []
        return self._moved


def as_right_as_the_model(out, ref, f64: Float64Reference | None, dtype: str) -> str:
    """Why a mode that differs from the NCHW model beyond f32's tolerance is right after all ("" when it is
    not): the model as it is is itself beyond that tolerance from its float64 output, and the mode is no
    further from it than 1.5 times the model's own distance; or one-ulp moves of the model's weights move its
    output beyond that tolerance, and the mode is within SENSITIVITY_FACTOR of the farthest of them (a wrong
    kernel or layout is off by O(1))."""
    tol = TOLERANCE["f32"]
    if f64 is None or dtype != "f32":
        return ""
    truth = f64.output()
    if truth is not None:
        _, model_err = compare_outputs(ref, truth)
        _, mode_err = compare_outputs(out, truth)
        if model_err is not None and mode_err is not None and model_err > tol and mode_err <= 1.5 * model_err:
            return (f"its output differs from the NCHW model's beyond f32's {tol:g}, but the model as it is is "
                    f"itself {model_err:.2g} off its float64 output and this mode {mode_err:.2g}: the model "
                    "amplifies f32 rounding through its layers (often so with random weights), and this mode is "
                    "as right as the model as it is")
    # the second rule: the model's own sensitivity to one-ulp moves of its weights
    moved = [e for e in (compare_outputs(m, ref)[1] for m in f64.moved_outputs()) if e is not None]
    _, err = compare_outputs(out, ref)
    if not moved or err is None or not max(moved) > tol or not err <= SENSITIVITY_FACTOR * max(moved):
        return ""
    return (f"its output differs from the NCHW model's beyond f32's {tol:g} ({err:.2g}), but moving the model's own "
            f"weights by one f32 ulp at random moves its output by up to {max(moved):.2g} ({len(moved)} draws): the "
            "model amplifies f32 rounding through its layers (often so with random weights), and this mode is "
            f"within {SENSITIVITY_FACTOR:g} times that")


def output_mismatch(out, ref) -> str:
    """Why a mode's output is not the NCHW model's at all ("" when it has the same tensors and shapes, or
    neither holds a tensor): a different number of tensors or a tensor of another shape is a wrong output,
    not one that "could not be compared" and so was timed as if right."""
    a, b = flat_tensors(dense_output(out)), flat_tensors(ref)
    if len(a) != len(b):
        return (f"output holds {len(a)} tensors where the NCHW model's holds {len(b)}; a wrong output is not "
                "timed.")
    for i, (x, y) in enumerate(zip(a, b)):
        if x.shape != y.shape:
            return (f"output tensor {i} has shape {tuple(x.shape)} where the NCHW model's has {tuple(y.shape)}; "
                    "a wrong output is not timed.")
    return ""


def compare_outputs(out, ref) -> tuple[float | None, float | None]:
    """(max abs error, max abs error / max |ref|) of a mode's output against the NCHW model's."""
    a, b = flat_tensors(dense_output(out)), flat_tensors(ref)
    if len(a) != len(b) or not a or any(x.shape != y.shape for x, y in zip(a, b)):
        return None, None  # never broadcast one shape against another: output_mismatch says why
    err = max(float((x.float() - y.float()).abs().max()) for x, y in zip(a, b))
    # Never below f32's smallest normal / eps: an output that small (random weights that vanish through many
    # layers: MobileViT read 9e-40) is denormal, with fewer than 24 bits left, and an error there is rounding.
    scale = max(max(float(y.float().abs().max()) for y in b) or 1.0, _DENORMAL_SCALE)  # all zeros: as before
    return err, err / scale


def _pop(stack: list) -> None:
    """A forward hook's body: it must return None, or it would replace the module's output."""
    if stack:
        stack.pop()


def where_failed(model, call) -> str:
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


# ---- a to_mkldnn model made to run as the jit's MKLDNN graph runs ---------------------------------
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


def make_mkldnn_runnable(model, call, max_fixes: int = 500) -> list[str]:
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


def copy_model(model):
    import torch

    if isinstance(model, torch.jit.ScriptModule):
        return model  # TorchScript modules are not copied (deepcopy is unreliable); nothing changes them
    return copy.deepcopy(model)


def fold_bn(model):
    """A copy of the model with BatchNorm folded into the convs (torch.fx), as torch.jit.freeze does; None
    when the model cannot be traced symbolically."""
    try:
        from torch.fx.experimental.optimization import fuse

        return fuse(copy.deepcopy(model))
    except Exception:  # noqa: BLE001
        return None
