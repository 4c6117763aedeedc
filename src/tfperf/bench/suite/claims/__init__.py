"""One module per claim group of the article (see ``docs/claims.md``), found by discovery.

Each module declares ``CLAIMS = ("S12",)`` and ``run(ctx: Context) -> list[Claim]``; modules
whose name starts with ``_`` are not claim modules.
"""
