"""The Sweep, Roofline, Compare and Model tabs."""
