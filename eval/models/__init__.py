"""Models that specqual makes itself, without hub downloads (registered in `eval.registry.MODEL_GENERATORS`).

Every generator has the signature `generate(out_dir: Path, seed: int, options: dict) -> Path` and returns a
model directory that vLLM can serve.
"""
