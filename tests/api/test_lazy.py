from __future__ import annotations

import threading
import time

import pytest

from api.lazy import Lazy


def test_concurrent_first_calls_build_once() -> None:
    built: list[int] = []

    def factory() -> list[int]:
        time.sleep(0.05)  # long enough for every thread to arrive while the first builds
        built.append(1)
        return built

    lazy = Lazy(factory)
    results: list[list[int]] = []
    threads = [threading.Thread(target=lambda: results.append(lazy.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == [1] and all(r is built for r in results) and lazy.loaded


def test_a_failed_factory_is_retried() -> None:
    calls = []

    def factory() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no model yet")
        return "service"

    lazy = Lazy(factory)
    with pytest.raises(RuntimeError):
        lazy.get()
    assert not lazy.loaded
    assert lazy.get() == "service" and lazy.loaded and len(calls) == 2


def test_close_releases_only_a_built_value() -> None:
    closed: list[str] = []
    lazy = Lazy(lambda: "service", close=closed.append)
    lazy.close()
    assert closed == [] and not lazy.loaded  # closing never builds
    lazy.get()
    lazy.close()
    assert closed == ["service"]
    Lazy(lambda: "no closer").close()  # without `close`, nothing to release
