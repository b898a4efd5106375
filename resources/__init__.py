"""Presets, batch files of real network layers and icons (shipped as explorer.resources)."""
