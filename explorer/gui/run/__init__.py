"""The Run tab: the parameter panel, the live timing chart, the per-path summary and the results table."""
