"""The `compiled` and `autocast_bf16` modes, prepared: each returns the fields of a modes.PreparedMode (a
dict, so this module needs nothing from modes and modes can dispatch here)."""

from __future__ import annotations

import time

COMPILED_WHY = ("measured only: inductor folds BatchNorm and fuses activations into its convs and picks the "
                "layouts across the whole graph, so no per-layer time plus an eager remainder stands for the "
                "compiled model")
AUTOCAST_F32_WHY = ("measured only: the per-layer table is f32 here; run the plan with --dtype bf16 for the bf16 "
                    "per-layer times this mode's prediction needs (autocast also casts every weight to bf16 "
                    "inside each forward, which no per-layer path times)")


def prepare_compiled(model, inp) -> dict:
    """`inp` is the model's input (a modes.ModelInput). torch.compile(model) with inductor's freezing (weights as constants, convs' weights prepacked, BatchNorm
    folded). Compiled here, by its first call, so the timed loop never compiles: `compile_ms` is that call."""
    import torch
    import torch._dynamo as dynamo  # an alias: `import torch.x` here would make `torch` a local name
    import torch._inductor.config as inductor_config

    from explorer.core.model.surgery import copy_model, dense_output
    from explorer.core.paths.base import PathUnsupported
    from explorer.core.paths.routes import compile_disabled, cxx_problem

    problem = compile_disabled()
    if problem:
        raise PathUnsupported(problem)
    problem = cxx_problem()
    if problem:
        raise PathUnsupported(f"torch.compile needs a C++ compiler: {problem}")
    dynamo.reset()  # a fresh cache: no earlier model's code counts towards dynamo's recompile limit
    m = copy_model(model).eval()
    compiled = torch.compile(m, backend="inductor", dynamic=False)
    with torch.no_grad(), inductor_config.patch({"freezing": True}):
        t0 = time.perf_counter_ns()
        inp.call(compiled)
        compile_ms = (time.perf_counter_ns() - t0) / 1e6
        inp.call(compiled)  # a guard miss recompiles here (freezing still on), not in the timed loop
    note = f"torch.compile (inductor, freezing on) compiled in {compile_ms / 1e3:.1f} s, not in the measured time"
    return {"fn": lambda: dense_output(inp.call(compiled)), "model": m, "remainder": None, "compile_ms": compile_ms,
            "note": note, "predict_why": COMPILED_WHY}


def prepare_autocast(model, inp, dtype: str, fmt) -> dict:
    """`inp` is the model's input (a ModelInput), `fmt` the channels-last format of its convs, or None when they
    have none (1-D convs): the model in that format (or as it is) under torch.autocast("cpu", torch.bfloat16),
    the way users try bf16 on a whole model. Predicted only in a bf16 plan, where the per-layer times of its
    path (channels_last, or dense for the model as it is) are bf16 convs: then the remainder is the stubbed
    model under the same autocast."""
    import torch

    from explorer.core.model.surgery import copy_model, stubbed_forward

    def laid_out(mod):
        return mod if fmt is None else mod.to(memory_format=fmt)

    def model_input():
        return inp if fmt is None else inp.to_memory_format(fmt)

    m = laid_out(copy_model(model))
    xc = model_input()

    def fn():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model_input().call(m)

    def rem():
        m2 = laid_out(copy_model(model))

        def stubbed():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return xc.call(m2)

        return stubbed_forward(m2, stubbed)

    bf16_plan = dtype == "bf16"
    if fmt is None:
        note = ("torch.autocast('cpu', torch.bfloat16) on the model as it is (its convs are 1-D, which have no "
                "channels-last format)")
    else:
        note = f"torch.autocast('cpu', torch.bfloat16) on the {str(fmt).removeprefix('torch.')} model"
    convert = [("input to channels_last", model_input)] if bf16_plan and fmt is not None else []
    return {"fn": fn, "model": m, "remainder": rem if bf16_plan else None, "note": note,
            "conversions": convert, "conv_path": "dense" if fmt is None else "",
            "predict_why": "" if bf16_plan else AUTOCAST_F32_WHY}
