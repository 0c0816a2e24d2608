"""How the app is served: `launch.py` starts a process with the allocator set up for TensorRT's builds (the app,
the tests, the benchmarks), `room.py` starts N app processes behind HAProxy, `server.py` is the stage's route
(answers without a script run) and its seats, `protocol.py` the stage's view model (the URL's spelling, the
controls, the answer), `assets.py` serves the stage's browser side (playground/stage/) as files, `shared.py`
holds what every session of the process shares and `prefetch.py` builds the moved slider's neighbours."""
