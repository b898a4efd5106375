"""Memory layouts: oneDNN format tags, the descriptors MKLDNN tensors really carry, and how each path stores its tensors."""
