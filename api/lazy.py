"""One expensive object per app, built on first use: the server's recommendation and linkage services.

Loading the encoder, an index or a trained model takes seconds and memory that a server which never
recommends (or never links) should not pay, so the app holds each service as a :class:`Lazy`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Lazy(Generic[T]):
    """The value of ``factory()``, built on the first :meth:`get`.

    Thread-safe: concurrent first calls build it once. A factory that raises (no index, no trained
    model yet) is called again on the next :meth:`get`, so building the missing piece later needs no
    restart. ``close`` is called with the value by :meth:`close` (the app's shutdown), if it was built.

    >>> opened = Lazy(lambda: ["service"], close=lambda value: value.clear())
    >>> opened.loaded
    False
    >>> opened.get(), opened.loaded
    (['service'], True)
    """

    def __init__(self, factory: Callable[[], T], *, close: Callable[[T], None] | None = None) -> None:
        self._factory = factory
        self._close = close
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._value is not None

    def get(self) -> T:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._factory()
        return self._value

    def replace(self, value: T) -> None:
        """Put ``value`` (built elsewhere, e.g. on a new index) in place of the built one.

        The previous value is not closed: requests that took it before the swap finish with it, and
        it is freed when the last of them lets go.
        """
        with self._lock:
            self._value = value

    def close(self) -> None:
        """Release the value if it was built (never builds it)."""
        if self._value is not None and self._close is not None:
            self._close(self._value)


__all__ = ["Lazy"]
