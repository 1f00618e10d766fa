"""Store settings from the environment, and the embedded store's page cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph import ConfigError, StoreConfig, open_store


def test_buffer_pool_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_BUFFER_POOL_MIB", "512")
    assert StoreConfig.from_env().buffer_pool_mib == 512
    monkeypatch.delenv("CITEGRAPH_BUFFER_POOL_MIB")
    assert StoreConfig.from_env().buffer_pool_mib == 0  # the engine's default


@pytest.mark.parametrize("value", ["-1", "a lot"])
def test_a_bad_buffer_pool_size_names_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CITEGRAPH_BUFFER_POOL_MIB", value)
    with pytest.raises(ConfigError, match="CITEGRAPH_"):
        StoreConfig.from_env()


def test_read_connections_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CITEGRAPH_READ_CONNECTIONS", "4")
    assert StoreConfig.from_env().read_connections == 4
    monkeypatch.delenv("CITEGRAPH_READ_CONNECTIONS")
    assert StoreConfig.from_env().read_connections == 2  # one for heavy statements, one kept for light ones


@pytest.mark.parametrize("value", ["0", "65", "many"])
def test_a_bad_read_connection_count_names_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CITEGRAPH_READ_CONNECTIONS", value)
    with pytest.raises(ConfigError, match=r"CITEGRAPH_READ_CONNECTIONS is .*1\.\.64"):
        StoreConfig.from_env()


def test_the_embedded_store_opens_with_the_configured_page_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ladybug

    sizes: list[int] = []
    real = ladybug.Database

    def recording(*args: object, **kwargs: object) -> object:  # the real engine, its arguments noted
        sizes.append(int(kwargs["buffer_pool_size"]))  # type: ignore[call-overload]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ladybug, "Database", recording)
    with open_store(StoreConfig(db_path=tmp_path / "small.db", buffer_pool_mib=64)) as store:
        assert store.stats()  # the store works with the small cache
    assert sizes == [64 * 2**20]
