"""litellm's format translators, behind one seam: the only place they are imported.

Each module here wraps one of litellm's translators for one client format, so the formats
(gateway/formats/) never import litellm. They are pinned to litellm 1.110.2 and tested
(tests/test_translate.py): an upgrade that moves or changes them fails loudly there, not in a
client's reply. Importing this package imports gateway.upstream first, which sets
`litellm.suppress_debug_info` before any translator can print its banner.
"""
