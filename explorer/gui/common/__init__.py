"""What every view shares: the path colours and themes, small layout widgets, chart export, and the one bridge from the session model to Qt signals."""
