"""Qt desktop app over explorer.core."""
