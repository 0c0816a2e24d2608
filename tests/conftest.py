# Shared pytest setup for the playground test suite.
#
# `gpu` marker: tests that need a CUDA device. They are skipped automatically
# where playground.trt.runner.gpu_info() finds none (this dev box, CI), and run on
# a borrowed GPU machine with `pytest -m gpu`.
#
# Keep imports here light (no tensorrt/streamlit/plotly): this file loads for
# every test run, including the GPU machine, which has no TensorRT.

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped when none is found)")


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return  # don't even probe CUDA when no GPU test was collected
    from playground.trt.runner import gpu_info

    if gpu_info() is None:
        skip = pytest.mark.skip(reason="no CUDA GPU")
        for item in gpu_items:
            item.add_marker(skip)


# The browser tests' app, one per test module (module scope: a module's tests share one app with an engine cache of
# its own, as a person's session would). A module that needs another app (a port of its own, a shared cache) defines
# its own fixture of the same name.
@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from playground.chromium import browser as B

    with B.serve_app(env={"PLAYGROUND_ENGINE_CACHE": str(tmp_path_factory.mktemp("engine_cache"))}) as url:
        yield url


# One Chromium for the whole run (each test or module opens contexts of its own in it): one Playwright per process,
# as a second would not start beside it, and a launch each module cost a second or two of the two cores.
@pytest.fixture(scope="session")
def browser():
    from playground.chromium import browser as B

    if B.chromium_path() is None:
        pytest.fail("no system Chromium: the browser tests need it (apt-get install chromium)", pytrace=False)
    with B.chromium() as chrome:
        yield chrome
