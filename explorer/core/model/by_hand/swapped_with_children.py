"""A BatchNorm2d/3d subclass with child modules (timm's BatchNormAct2d, with 'drop' and 'act'), converted as a
user would by hand for to_mkldnn: its own norm as a plain nn.BatchNorm2d/3d (to_mkldnn makes that an
MkldnnBatchNorm on the same weight, bias and running statistics), its children kept and called after it in
their order. The split is checked on the module's real input from one forward, so a subclass whose forward
does something else is refused with that reason, never converted into a wrong model."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class HandConversion:
    converted: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # (path, class, children)
    refused: list[str] = field(default_factory=list)  # one true sentence each: path, class, why
    refused_paths: list[str] = field(default_factory=list)

    def note(self) -> str:
        """The mode's note: what was converted by hand, in one clause ("" when nothing was)."""
        if not self.converted:
            return ""
        path, cls, kids = self.converted[0]
        classes = sorted({c for _, c, _ in self.converted})
        more = f", {len(self.converted) - 1} more alike" if len(self.converted) > 1 else ""
        return (f"converted by hand: {len(self.converted)} {'/'.join(classes)} (e.g. {path}{more}) as a plain "
                f"BatchNorm (an MKLDNN BatchNorm) followed by {'its child' if len(kids) == 1 else 'its children'} "
                f"{', '.join(repr(k) for k in kids)}, kept and called in order, since to_mkldnn cannot keep "
                "children of a module it swaps")


def _norm_base(m):
    from torch import nn

    return next((b for b in (nn.BatchNorm2d, nn.BatchNorm3d) if isinstance(m, b)), None)


def candidates(model) -> list[str]:
    """Paths of the BatchNorm2d/3d subclasses with children below the root (outermost only)."""
    out: list[str] = []
    for name, m in model.named_modules():
        if (name and _norm_base(m) is not None and type(m) is not _norm_base(m) and list(m.children())
                and not any(name.startswith(p + ".") for p in out)):
            out.append(name)
    return out


def _split(m):
    """The plain norm and the children-after module standing for `m` (not yet checked)."""
    import copy

    from torch import nn

    base = _norm_base(m)
    kids = list(m.named_children())
    plain = base(m.num_features, eps=m.eps, momentum=m.momentum, affine=m.affine,
                 track_running_stats=m.track_running_stats)
    plain.load_state_dict({k: v for k, v in m.state_dict().items() if "." not in k})
    plain.train(m.training)

    class NormThenChildren(nn.Module):
        """The norm, then each child the subclass held, under its own name (paths read bn1.drop, bn1.act)."""

        def __init__(self):
            super().__init__()
            self.norm = plain
            for k, c in kids:
                setattr(self, k, copy.deepcopy(c))
            self.order = tuple(k for k, _ in kids)

        def forward(self, x):
            x = self.norm(x)
            for k in self.order:
                x = getattr(self, k)(x)
            return x

    if "norm" in dict(kids):  # a child of that name would be overwritten: keep it as the subclass had it
        return None
    return NormThenChildren()


def _copied(v):
    import torch

    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, tuple):
        return tuple(_copied(t) for t in v)
    return v


def _keep(store: dict, key: str, value) -> None:
    """A hook's body: the first call's value, copied; it returns None, or it would replace the input/output."""
    if key not in store:
        store[key] = _copied(value)


def convert_by_hand(model, call) -> HandConversion:
    """Replace, in `model` (a private copy, changed in place), each BatchNorm subclass with children by its
    plain norm and children, when that gives the same output on the input it really got in `call()`; the
    others are listed as refused, with why."""
    import torch

    from explorer.core.model.surgery import set_submodule

    got = HandConversion()
    paths = candidates(model)
    if not paths:
        return got
    seen: dict = {}  # path -> (input, output), copied when they happen: later modules work in place (x += s)
    ins: dict = {}
    hooks = []
    for p in paths:
        m = model.get_submodule(p)
        hooks.append(m.register_forward_pre_hook(lambda _m, a, p=p: _keep(ins, p, a)))
        hooks.append(m.register_forward_hook(lambda _m, _a, o, p=p: _keep(seen, p, (ins[p], o))))
    try:
        with torch.no_grad():
            call()
    except Exception:  # noqa: BLE001 - no forward to check on: nothing converted (mkldnn_blockers names them)
        return got
    finally:
        for h in hooks:
            h.remove()
    for p in paths:
        m = model.get_submodule(p)
        cls, kids = type(m).__name__, tuple(k for k, _ in m.named_children())
        new = _split(m)
        if new is None:
            got.refused.append(f"{p} ({cls}) has a child named 'norm', which the by-hand conversion would hide")
            got.refused_paths.append(p)
            continue
        if p not in seen:  # never ran in the forward: what it computes is unknown, and it costs nothing
            continue
        args, out = seen[p]
        with torch.no_grad():
            try:
                mine = new(*args)
                same = isinstance(out, torch.Tensor) and mine.shape == out.shape and torch.allclose(
                    mine, out, rtol=1e-4, atol=1e-5 * max(1.0, float(out.abs().max())))
            except Exception:  # noqa: BLE001 - its forward takes more than the norm's input
                same = False
        if not same:
            got.refused.append(f"{p} ({cls}) is an nn.{_norm_base(m).__name__} subclass with child modules "
                               f"{', '.join(repr(k) for k in kids)} whose forward is not its norm followed by "
                               "those children in order, so it cannot be converted by hand as one")
            got.refused_paths.append(p)
            continue
        set_submodule(model, p, new)
        got.converted.append((p, cls, kids))
    return got
