"""The real inputs of the convs the model feeds subnormals, kept from the inventory's forward pass so they can
be timed as the model feeds them (a random input of the same shape holds no subnormal at all)."""

from __future__ import annotations

from dataclasses import dataclass, field

KEEP_CAP_BYTES = 512 << 20  # what the kept inputs may take together; past it a site is synthesised instead


@dataclass
class KeptCall:
    """One conv call: its site index, module path, real input (a copy) and the rest of aten.convolution's args."""

    site: int
    input: object
    args: tuple  # weight, bias, stride, padding, dilation, transposed, output_padding, groups
    synthesised: bool = False

    def run(self):
        import torch

        return torch.ops.aten.convolution.default(self.input, *self.args)


@dataclass
class KeptInputs:
    """Filled by the inventory's recorder: the calls whose input profile is subnormal, under `cap` bytes."""

    cap: int = KEEP_CAP_BYTES
    calls: list = field(default_factory=list)
    used: int = 0

    def offer(self, site: int, inp, args: tuple, profile) -> None:
        if profile is None or not profile.subnormal:
            return
        n = inp.numel() * inp.element_size()
        if self.used + n <= self.cap:
            self.calls.append(KeptCall(site, inp.detach().clone(), tuple(args)))
            self.used += n
        else:  # over the cap: an input of the same scale and subnormal share, made when it is timed
            self.calls.append(KeptCall(site, (tuple(inp.shape), inp.dtype, profile), tuple(args), True))

    def materialised(self) -> list[KeptCall]:
        """The calls with a real tensor each (the synthesised ones made now, one at a time is the caller's)."""
        return [c if not c.synthesised else KeptCall(c.site, synthesise(*c.input), c.args, True) for c in self.calls]


def synthesise(shape: tuple, dtype, profile):
    """A tensor with the profile's scale, share of zeros and share of subnormals (normal values drawn at the
    profile's std, a share of them replaced by subnormals of random sign, another share by zeros)."""
    import torch

    g = torch.Generator().manual_seed(0)
    t = torch.randn(shape, generator=g) * max(profile.std, torch.finfo(dtype).tiny * 4)
    u = torch.rand(shape, generator=g)
    tiny = torch.finfo(dtype).tiny
    sub = (torch.rand(shape, generator=g) * 0.9 + 0.05) * tiny * torch.sign(torch.randn(shape, generator=g))
    t = torch.where(u < profile.subnormal_share, sub, t)
    t = torch.where((u >= profile.subnormal_share) & (u < profile.subnormal_share + profile.zero_share),
                    torch.zeros((), dtype=t.dtype), t)
    return t.to(dtype)


def profiled_tensors(t, profile):
    """A path's Tensors with its input replaced by one of the profile's statistics when the model feeds that
    conv subnormals (the in-order conv pass then pays their cost as the model does); else `t` itself."""
    import dataclasses

    from explorer.core.model.activations.profile import as_profile

    p = as_profile(profile)
    if p is None or not p.subnormal or not t.x.is_floating_point():
        return t
    x = synthesise(tuple(t.x.shape), t.x.dtype, p)
    return dataclasses.replace(t, x32=x.float(), x=x)


def layer_tensors(layer):
    """The per-layer table's tensor maker for a layer the model feeds subnormals (its seeded tensors with an
    input of the layer's profile), or None: a layer fed normal values keeps the seeded random input."""
    from explorer.core.model.activations.profile import as_profile

    p = as_profile(getattr(layer, "input_profile", ()))
    if p is None or not p.subnormal:
        return None

    def make(spec):
        from explorer.core.paths.base import Tensors

        return profiled_tensors(Tensors.make(spec), p)

    return make
