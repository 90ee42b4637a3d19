"""litellm's client-format translators, behind one door.

This package is the one place litellm's format translators (Anthropic Messages, Responses,
Gemini, ...) are imported, as the seam's readers are the one place litellm is called. They
are pinned to litellm 1.110.2 (pyproject.toml), whose defects are corrected here, next to the
call; tests/test_format_*.py check that every translator used still exists with the signature
relied on, so an upgrade that moves or changes one fails loudly instead of translating wrong.

`chat`: a route turn's chunks and plain reply as litellm's own objects, for the adapters.
"""
