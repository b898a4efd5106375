"""The whole-model planner: load a model, list its convolutions, time each layer and each end-to-end mode, and predict."""
