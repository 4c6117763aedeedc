"""tune's levers, one module each; every module exposes ``levers(ctx) -> list[Lever]``."""
