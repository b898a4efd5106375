"""The session: what the window and the command line share, saved and restored as one JSON file."""
