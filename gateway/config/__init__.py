"""The config file: its shape declared once (`schema`), pydantic's errors in the file's own
words (`words`), and the file read, validated and resolved into a `Config` (`settings`).

May import: routing (the catalog it builds). Nothing else of gateway."""
