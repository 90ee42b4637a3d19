"""litellm's format translators, behind one package: the only place they are imported.

Pinned to litellm 1.110.2. Each module wraps one translator in a small function of plain values
(copies in, plain dicts out) and corrects, around it, the defects measured in that version. The
tests in tests/test_translate_*.py call the translators' own API, so an upgrade that moves or
reshapes them fails loudly there instead of quietly changing a format.
"""
