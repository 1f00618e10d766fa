"""api/schema.graphql is the schema as served, and the GraphiQL assets are the CDN's own files."""

from __future__ import annotations

import base64
import hashlib
import re

from strawberry.http.ides import get_graphql_ide_html

from api.schema import SCHEMA_FILE, schema_sdl
from api.web import STATIC_DIR, graphiql_assets, missing_assets


def test_schema_file_is_current() -> None:
    assert SCHEMA_FILE.is_file(), "api/schema.graphql is missing; run `make schema`"
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_sdl(), "api/schema.graphql is stale; run `make schema`"


def test_local_graphiql_assets_match_the_cdn_integrity_hashes() -> None:
    """The browser checks strawberry's `integrity` hashes; the local files must be those exact bytes."""
    assert (STATIC_DIR / "package-lock.json").is_file()
    assert not missing_assets(), missing_assets()
    html = get_graphql_ide_html("graphiql")
    for asset in graphiql_assets():
        url = f"https://unpkg.com/{asset.package}@{asset.version}/{asset.path}"
        integrity = re.search(re.escape(url) + r'"\s+integrity="sha384-([^"]+)"', html)
        assert integrity, f"no integrity hash for {url}"
        digest = base64.b64encode(hashlib.sha384(asset.file.read_bytes()).digest()).decode()
        assert digest == integrity.group(1), f"{asset.file} differs from {url}"
