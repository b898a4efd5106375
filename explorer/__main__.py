"""`python -m explorer` runs the command line."""

from explorer.launch import main

if __name__ == "__main__":
    raise SystemExit(main())
