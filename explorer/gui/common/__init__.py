"""What every view shares: the path colours and themes, small layout widgets, chart export."""
