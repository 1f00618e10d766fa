"""Browser pages served without internet: GraphiQL from local npm packages, and the dashboard.

strawberry's GraphiQL page loads React, GraphiQL and the explorer plugin from a CDN
(``https://unpkg.com/<package>@<version>/<path>``). :func:`offline_graphiql_html` points every such
URL at ``/assets/<package>/<path>``, served from ``api/static/node_modules`` — the npm packages that
``make install`` puts there from ``api/static/package-lock.json``. The page keeps strawberry's
``integrity`` hashes, so a browser runs the local files only if they are byte for byte the files
the CDN would have sent. :func:`missing_assets` names any package absent or at another version.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from strawberry.http.ides import get_graphql_ide_html

STATIC_DIR = Path(__file__).with_name("static")
NODE_MODULES = STATIC_DIR / "node_modules"
DASHBOARD_DIR = STATIC_DIR / "dashboard"
ASSETS_URL = "/assets"  # where NODE_MODULES is mounted
_CDN_URL = re.compile(r"https://unpkg\.com/(?P<package>(?:@[^/@\"]+/)?[^/@\"]+)@(?P<version>[^/\"]+)/(?P<path>[^\"]+)")


@dataclass(frozen=True)
class Asset:
    package: str
    version: str
    path: str  # inside the package

    @property
    def local_url(self) -> str:
        return f"{ASSETS_URL}/{self.package}/{self.path}"

    @property
    def file(self) -> Path:
        return NODE_MODULES / self.package / self.path


def graphiql_assets() -> list[Asset]:
    """The CDN files strawberry's GraphiQL page loads."""
    return [Asset(m["package"], m["version"], m["path"]) for m in _CDN_URL.finditer(get_graphql_ide_html("graphiql"))]


def missing_assets() -> list[str]:
    """What keeps the GraphiQL page from working offline, one line per asset; empty when all is there."""
    problems = []
    for asset in graphiql_assets():
        manifest = NODE_MODULES / asset.package / "package.json"
        if not manifest.is_file():
            problems.append(f"{asset.package} is not installed under {NODE_MODULES} (run `make install`)")
            continue
        version = json.loads(manifest.read_text(encoding="utf-8")).get("version")
        if version != asset.version:
            problems.append(
                f"{asset.package} is {version}, the GraphiQL page needs {asset.version}; pin it in "
                f"{STATIC_DIR / 'package.json'} and run `make install`"
            )
        elif not asset.file.is_file():
            problems.append(f"{asset.file} is missing from {asset.package} {version}")
    return problems


@cache
def offline_graphiql_html() -> str:
    """strawberry's GraphiQL page with every CDN URL pointed at the local copy."""
    html = get_graphql_ide_html("graphiql")
    return _CDN_URL.sub(lambda m: f"{ASSETS_URL}/{m['package']}/{m['path']}", html)


__all__ = [
    "ASSETS_URL",
    "DASHBOARD_DIR",
    "NODE_MODULES",
    "STATIC_DIR",
    "Asset",
    "graphiql_assets",
    "missing_assets",
    "offline_graphiql_html",
]
