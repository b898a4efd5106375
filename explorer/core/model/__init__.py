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
   of the mode's layout), touched before it is returned so it is read hot, as a conv's fresh output is (the
   touches timed alone in the same rounds and taken off). The conv pass, the remainder and the mode's own forward are timed in one loop,
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
again (measure.retry.MAX_ATTEMPTS) and kept marked. A ratio built on a noisy figure is uncertain, never a finding.

The modules, from the bottom up:
    zoo        the built-in reference networks
    load       what the user names: a built-in, package.module:callable, a .pt2 or TorchScript file
    surgery    module surgery: stubbing and wrapping convs, outputs to dense, making a to_mkldnn model run
    inventory  the one forward pass that lists every convolution, grouped into distinct layers
    report     the modes' names, the options, the events, and the per-mode and per-layer results
    chained    the mkldnn path on an already blocked input (the MKLDNN modes' per-layer time)
    sequence   the mode's convs timed in model order
    drift      a reference layer timed around each mode (how far the host moved)
    jit        the frozen jit graph cut into its conv and remainder parts
    inplace    the convs' time inside a mode's own forward
    modes      preparing and measuring one end-to-end mode
    job        iter_model: the whole planner as a generator of events, and its prediction
    model_csv  the model CSV: its rows and the sink that rewrites it as they arrive
"""

from __future__ import annotations

import warnings

# torch 2.13 marks every torch.jit entry point deprecated; the jit mode is PyTorch's own MKLDNN route and
# is measured on purpose, so the warning is noise here.
warnings.filterwarnings("ignore", message=r"`torch\.jit\.[a-z_]+` is deprecated", category=DeprecationWarning)
