"""``tfperf lint``: static checks for the article's TensorFlow anti-patterns, with fixes.

Static only: the linted code is never imported or run, and no TensorFlow is needed.
``engine`` lints a module, ``semantic`` answers what names refer to and where code runs,
``rules/`` holds one module per rule, ``fix`` applies their edits safely.
"""
