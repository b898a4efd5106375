"""Qt-free core, in layers: each subpackage imports only those below it (import-linter checks it).

    session   the session model the window and the CLI share, saved and restored whole
    process   the measuring child process and its pool
    model     the whole-model planner
    jobs      run options, events, one spec over the paths, sweeps and batches
    report    result rows and CSVs, comparisons, roofline, timeline
    layout    format tags, real descriptors, how each path stores its tensors
    paths     the eager paths, the routes to oneDNN, one registry
    problem   the spec and its descriptor, the memory guard, batch files, listings, sweep plans
    measure   the timing loop, interference, the retry rule, the machine and its peak, the allocator
    trace     oneDNN verbose lines and the ATen ops of one call
    errors, files   one-sentence errors and safe file writes, used by all

Nothing under explorer.core may import Qt (tests/core/test_no_qt.py and import-linter check it).
"""
