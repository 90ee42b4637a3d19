"""The `bench-gateway` command (`main`): serve, demo, simulate, check-config, keys; and the
client commands against a running gateway (`client`: ask, verdict, status, mcp), its live seat
view on a terminal (`progress`), key management (`keys`) and the offline demo (`demo`).

The outermost layer: may import anything in gateway; nothing imports it."""
