"""`bench-gateway keys create|list|revoke`: managing gateway keys in the record store.

It is given a config loaded without the providers' secrets: it needs only the store and the
collections' names, and must work on a machine where those secrets are not set."""

from __future__ import annotations

import asyncio
import sys
import time
from argparse import Namespace

from gateway.access.keys import KEY_NAME, key_record, new_key
from gateway.config.settings import Config
from gateway.request.client import LOCAL
from gateway.store.interface import RecordStore
from gateway.store.open import open_store


def run_keys(config: Config, args: Namespace) -> int:
    return asyncio.run(_run(config, args))


async def _run(config: Config, args: Namespace) -> int:
    if args.action in ("create", "revoke") and not args.name:
        print(f"bench-gateway: keys {args.action} needs a NAME", file=sys.stderr)
        return 2
    store = open_store(config.store)
    await store.open()
    try:
        if args.action == "create":
            return await _create(config, store, args)
        if args.action == "revoke":
            if await store.revoke_key(args.name):
                print(f"revoked {args.name}")
                return 0
            print(f"bench-gateway: no active key named {args.name!r}", file=sys.stderr)
            return 1
        for key in await store.keys():
            scopes = ",".join(key["collections"]) if key["collections"] is not None else "*"
            used = _when(key["last_used"]) if key["last_used"] else "never"
            state = "revoked" if key["revoked"] else "active"
            print(
                f"{key['name']:<20} ...{key['last4']}  {state:<8} collections={scopes} "
                f"rpm={key['rpm'] or '-'} created={_when(key['created'])} last_used={used}"
            )
        return 0
    finally:
        await store.close()


async def _create(config: Config, store: RecordStore, args: Namespace) -> int:
    if not KEY_NAME.match(args.name):
        print("bench-gateway: a key name is letters, digits, '.', '_' or '-'", file=sys.stderr)
        return 2
    if args.name == LOCAL:  # it would read every record made while keys were not required
        print(f"bench-gateway: {LOCAL!r} is the name of keyless callers", file=sys.stderr)
        return 2
    collections = None
    if args.collections:
        collections = [c.strip() for c in args.collections.split(",") if c.strip()]
        known = {c.name for c in config.catalog.collections} | {"panel"}
        unknown = [c for c in collections if c not in known]
        if unknown:
            print(f"bench-gateway: unknown collection(s): {', '.join(unknown)}", file=sys.stderr)
            return 1
    if args.rpm is not None and args.rpm < 1:
        print("bench-gateway: --rpm must be a positive number", file=sys.stderr)
        return 2
    key = new_key()
    if not await store.add_key(key_record(args.name, key, collections, args.rpm)):
        print(f"bench-gateway: a key named {args.name!r} already exists", file=sys.stderr)
        return 1
    print(key)
    print(f"(key {args.name!r} created; it is shown only this once)", file=sys.stderr)
    return 0


def _when(moment: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(moment))
