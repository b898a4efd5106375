"""Running a problem: the run options, the events, one spec over the paths, and sweeps and batches point by point."""
