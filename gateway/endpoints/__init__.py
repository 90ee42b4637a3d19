"""The HTTP routes, all in one table. Every route that asks models goes through one door
(`asking`), then a panel (`panels`: read -> seat -> render) or a route-mode turn (`turns`); the
records under /bench are `records`, the model listings `models`, the other formats' listings and
token counts `listings`; `common` is what every endpoint needs.

May import: formats, panel, route, records, access, state, store, runtime, config, errors."""
