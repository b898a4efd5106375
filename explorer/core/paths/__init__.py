"""The ways to run one convolution: the shared types, the six eager paths, today's routes to oneDNN, and one registry by name."""
