"""Today's end-to-end modes, beside the four MKLDNN-era ones (explorer.core.model.modes dispatches here):

    compiled        torch.compile (inductor) with torch._inductor.config.freezing on, as inductor's docs
                    recommend for inference; compiled before the timed loop, its compile time reported apart
    autocast_bf16   the channels_last model under torch.autocast("cpu", torch.bfloat16)
    int8            PT2E (torchao's X86InductorQuantizer, calibrated on the example input) + torch.compile (int8.py)

and the bf16 facts every bf16 figure carries: its output error against the f32 model as it is, and whether
oneDNN, on this CPU, has a fast bf16 ISA at all (bf16.py).

    bf16       oneDNN's ISA read for fast bf16 (avx512_bf16 or AMX), and the note when it has none
    compiled   the two modes' preparation (the fields of a modes.PreparedMode)
"""
