"""Qt-free core: spec, validation, paths, timing harness, layouts, trace, sweeps and results.

Nothing under explorer.core may import Qt (tests/core/test_no_qt.py checks it).
"""
