"""MKLDNN Explorer: what to_mkldnn() really does to a convolution on this CPU."""

__version__ = "0.1.0"
