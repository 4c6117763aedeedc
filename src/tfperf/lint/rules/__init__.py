"""The rule catalogue: one module per rule (``tfpNNN_slug.py``), discovered by the registry.

Modules whose name starts with ``_`` hold helpers shared by rules.
"""
