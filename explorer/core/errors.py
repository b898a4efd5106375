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
