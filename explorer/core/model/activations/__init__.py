"""What the model really feeds its convs: each conv site's input profile (scale, zeros, subnormals), recorded
in the inventory's forward pass, and the subnormal finding (which convs see denormal inputs, what they cost,
and what torch.set_flush_denormal(True) saves, measured).

    profile    InputProfile: one input's statistics, and the bucket that makes two layers time differently
    kept       the real inputs of the convs fed subnormals, kept under a memory cap for timing
    denormal   the finding: those convs and the whole forward timed with and without flush-denormal
"""
