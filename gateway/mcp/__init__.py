"""The bench as MCP tools (`tools`: list_collections, ask, verdict, pending_verdicts), served on
the gateway itself at `POST /mcp` (`http`) and over stdio by `bench-gateway mcp` (`stdio`), and
the client of a running gateway both the stdio server and the shell commands use (`remote`).
What `POST /mcp` takes as a message: `message`.

May import: panel, formats (chat's reader), records, access, runtime, config, errors,
endpoints (a body read within the gateway's limits; the listing of collections)."""
