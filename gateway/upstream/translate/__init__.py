"""litellm's client-format translators, behind one door.

This package is the one place litellm's format translators (Anthropic Messages, Responses,
Gemini, ...) are imported, as `gateway.upstream.calls` is the one place litellm is called. They
are pinned to litellm 1.110.2 (pyproject.toml), whose defects are corrected here, next to the
call; tests/test_format_*.py check that every translator used still exists with the signature
relied on, so an upgrade that moves or changes one fails loudly instead of translating wrong.

Importing this package imports `gateway.upstream` first, whose seam sets
`litellm.suppress_debug_info` (an unknown model name would print a banner to stdout otherwise).
"""
