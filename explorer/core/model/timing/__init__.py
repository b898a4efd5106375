"""How the planner spends its time: the per-layer table's early stops (ranking)."""
