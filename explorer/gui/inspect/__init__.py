"""The inspector of one result: its memory layouts drawn, and the oneDNN primitives and ATen ops it ran."""
