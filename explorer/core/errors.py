"""Error types. Every error a user can cause is an ExplorerError carrying one clear sentence."""


class ExplorerError(Exception):
    """A problem with the user's input or environment; str() is the one sentence shown to them."""


class SpecError(ExplorerError, ValueError):
    """A convolution spec or descriptor that cannot be run; `field` names the offending field."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class InputError(ExplorerError, ValueError):
    """Any other bad input (options, --vary, tags, files); `field` names the option when known."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class Fault(ExplorerError):
    """Not the user's input: something stopped the run (the measuring process killed, a disk full). The CLI
    exits 3 (EXIT_FAULT) for it, after the rows that finished were kept."""


class WriteFault(Fault):
    """An output file could not be written. `text` is everything that should have been in it (for the
    recovery copy); `rows_safe` how many rows are in `path` on disk; `recovered` where the full copy went."""

    def __init__(self, path: str, reason: str, rows_safe: int | None = None, rows_total: int | None = None,
                 text: str = "", kind: str = "rows"):
        self.path, self.reason, self.rows_safe, self.rows_total = str(path), reason, rows_safe, rows_total
        self.text, self.kind, self.recovered = text, kind, None
        super().__init__(self.sentence())

    def sentence(self) -> str:
        s = f"cannot write {self.path!r}: {self.reason}"
        if self.rows_safe is not None:
            s += f"; {self.rows_safe} of {self.rows_total} {self.kind} are safe in it"
        if self.recovered:
            s += f", all {self.rows_total} in {self.recovered}" if self.rows_total is not None else \
                f"; its content was saved to {self.recovered}"
        return s + "."
