"""How the app is served: `launch.py` starts a process with the allocator set up for TensorRT's builds (the app,
the tests, the benchmarks), `room.py` starts N app processes behind HAProxy, and `server.py` is the stage's route
(answers without a script run) and its seats."""
