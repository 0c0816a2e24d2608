"""The browser sides as files (playground/serve/assets.py): the asset routes serve every module the entries import
(the stage's; the graph's, its layout worker and dagre), under the version of their contents, and nothing else;
each module keeps to one job and 400 lines."""

from __future__ import annotations

import dataclasses
import re

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from playground.serve import assets, server
from playground.ui import stage as ui_stage

IMPORT = re.compile(r'^import .* from "\./([^"]+)";$', re.MULTILINE)


@pytest.fixture()
def client():
    return TestClient(Starlette(routes=server.routes()), base_url="http://stage.test")


def _reached(client, route: str, entries, found: dict) -> set[str]:
    """The modules served under `route` as the browser reaches them from `entries`: their relative imports (and a
    worker's `new URL("./x.js", import.meta.url)`), theirs, …; each asserted JavaScript, kept for good, its bytes the
    file's."""
    seen, todo = set(), list(entries)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        r = client.get(f"{route}/{name}")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript"), name
        assert "immutable" in r.headers["cache-control"] and r.content == found[name]
        todo += IMPORT.findall(r.text) + re.findall(r'new URL\("\./([^"]+)", import\.meta\.url\)', r.text)
    return seen


def test_the_entry_and_every_module_it_reaches_are_served_for_good_under_their_version(client):
    version, found = assets.files()
    seen = _reached(client, f"{assets.STAGE.route}/{version}", assets.ENTRIES, found)
    assert seen == set(found)  # no module served that nothing imports
    assert assets.url() == f"{assets.STAGE.route}/{version}/stage.js"
    assert assets.urls()[0] == assets.url() and sorted(assets.urls()) == sorted(assets.url(n) for n in found)
    assert assets.urls(assets.STILL)[0] == assets.url(assets.STILL) and sorted(assets.urls(assets.STILL)) == sorted(
        assets.urls()
    )


def test_another_version_gets_the_files_not_to_be_kept_and_nothing_else_is_served(client):
    version, found = assets.files()
    r = client.get(f"{assets.STAGE.route}/0000/stage.js")
    assert r.status_code == 200 and r.headers["cache-control"] == "no-cache" and r.content == found["stage.js"]
    for name in ("server.py", "stage.css", "package.json", "..%2Fserver.py", "STAGE.JS"):
        assert client.get(f"{assets.STAGE.route}/{version}/{name}").status_code == 404, name
    assert client.get(f"{assets.STAGE.route}/{version}/../server.py").status_code == 404
    assert client.post(f"{assets.STAGE.route}/{version}/stage.js").status_code == 405


def test_the_version_follows_the_contents(tmp_path):
    version, found = assets.files()
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    for name, data in found.items():
        (tmp_path / name).write_bytes(data)
    copy = dataclasses.replace(assets.STAGE, here=tmp_path)
    try:
        assert assets.files(copy)[0] == version  # the same files: the same address (a browser keeps them)
        (tmp_path / "format.js").write_bytes(found["format.js"] + b"// changed\n")
        assets.files.cache_clear()
        assert assets.files(copy)[0] != version  # a release's changed module: a new address for all of them
    finally:
        assets.files.cache_clear()


def test_each_module_has_one_job_in_at_most_400_lines():
    _, found = assets.files()
    assert {"stage.js", "state.js", "net.js", "controls.js", "heatmap.js", "format.js"} <= set(found)
    graph = {n: d for n, d in assets.files(assets.GRAPH)[1].items() if n != "dagre.esm.js"}  # dagre: vendored
    for name, data in (found | graph).items():
        lines = data.decode().splitlines()
        assert len(lines) <= 400, f"{name}: {len(lines)} lines"
        assert lines[0].startswith("// "), f"{name} does not open by saying what it is for"


def test_the_component_imports_the_modules_from_the_addresses_the_page_sends():
    assert "component.data.modules" in ui_stage.LOADER and "import(" in ui_stage.LOADER


def test_the_graphs_modules_are_served_from_their_folder_and_nothing_else_is(client):
    """graph.js imports its neighbours and starts layout.js (which imports dagre) by relative address: every module
    it reaches is served as JavaScript under the graph folder's version; another extension, a name outside the
    folder or the stage's modules under the graph's route are 404."""
    version, found = assets.files(assets.GRAPH)
    route = f"{assets.GRAPH.route}/{version}"
    seen = _reached(client, route, [assets.GRAPH_ENTRY], found)
    assert (
        seen
        == set(found)
        == {"graph.js", "draw.js", "groups.js", "levels.js", "layout.js", "minimap.js", "viewport.js", "dagre.esm.js"}
    )
    assert (
        assets.urls(assets.GRAPH_ENTRY, assets.GRAPH)[0]
        == assets.url(assets.GRAPH_ENTRY, assets.GRAPH)
        == (f"{route}/graph.js")
    )
    for name in (
        "graph.css",
        "package.json",
        "LICENSE.dagre",
        "dagre.esm.js.LEGAL.txt",
        "stage.js",
        "..%2Fserve%2Fassets.py",
    ):
        assert client.get(f"{route}/{name}").status_code == 404, name
    assert client.get(f"{route}/../stage/stage.js").status_code == 404
    assert client.get(f"{assets.STAGE.route}/{assets.files()[0]}/graph.js").status_code == 404
    assert version != assets.files()[0]  # each folder its own version


def test_the_graphs_loader_imports_the_entry_the_page_names():
    from playground.ui import model_page

    assert "component.data.module" in model_page.LOADER and "import(" in model_page.LOADER
