"""Layers evaluated and built: `core.py` a layer's configuration (reference, engine, comparison),
`chain.py` a chain of layers (`chains.py`: the starter chains), `presets.py` a layer's spec examples found and
compared, `export.py` and `chain_export.py` the standalone scripts (`script_runner.py` the part they carry)."""
