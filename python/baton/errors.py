"""Baton's exceptions.

Every error the C++ library raises arrives as a subclass of :class:`BatonError` that names its
category (``error.category``) and carries Baton's message. Each also derives from the built-in
exception a Python caller would catch for that kind of failure.
"""


class BatonError(Exception):
    """A failure reported by Baton; ``category`` names its kind."""

    category = "internal error"


class InvalidArgumentError(BatonError, ValueError):
    """A bad value: a parameter, a request field, an unknown adapter name."""

    category = "invalid argument"


class InvalidModelError(BatonError, ValueError):
    """A model or adapter file that is corrupt, truncated or inconsistent."""

    category = "invalid model"


class UnsupportedError(BatonError, NotImplementedError):
    """Well-formed input that Baton does not implement (an architecture, a data type)."""

    category = "unsupported"


class BackendError(BatonError, RuntimeError):
    """A backend that is missing, unusable on this host, or failed."""

    category = "backend error"


class BatonIOError(BatonError, OSError):
    """A file that could not be opened, read or mapped."""

    category = "i/o error"


class BatonMemoryError(BatonError, MemoryError):
    """An allocation or the KV cache pool ran out."""

    category = "out of memory"


class InternalError(BatonError, RuntimeError):
    """A broken invariant inside Baton: a bug to report."""

    category = "internal error"
