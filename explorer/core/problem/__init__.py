"""The problem a user asks about, before anything runs: the convolution spec and its benchdnn descriptor, 1-D/2-D/3-D forms, the memory guard, batch files, listings and sweep plans."""
