"""The config file: its shape declared once (`schema`), pydantic's errors in the file's own
words (`words`), each section checked item by item (`sections`): the connections
(`connections`), the models, shapes and collections (`catalog`), `os.environ/` references
(`environ`); and the file read, validated and resolved into a `Config` (`settings`).

May import: routing (the catalog it builds). Nothing else of gateway."""
