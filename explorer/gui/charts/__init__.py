"""The sweep charts (line, speedup, bar, heatmap) and what they share: axes, hover, styling."""
