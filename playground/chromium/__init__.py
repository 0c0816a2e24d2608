"""Driving the app in the system Chromium (Playwright): the helpers the browser tests and benchmarks use
(`browser`) and the documentation screenshots (`snapshot`). Nothing in the app imports this package."""
