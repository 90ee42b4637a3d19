"""`bench-gateway models add` and `models remove`: the config file edited by a command, not by hand.

Why a probe before the write: a model that cannot answer (a wrong slug, a key not set, a host
that is down) would otherwise go onto the bench and fail its first panels. So `add` asks the
model itself, directly through the gateway's own upstream seam (not a running gateway), twice:
a short prompt it must answer, and one of about 6,000 tokens whose refusal, when it names the
model's context window, is kept as `bench.context_window`. Only then is the file written, with
every comment and line it had kept (gateway/config/edit.py), once the loader `check-config`
uses has taken the new text (gateway/config/rewrite.py). A running gateway takes the change on
a reload; the command says how.

Exit codes: 0 written, 1 refused (the file untouched, the reason on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import sys
from pathlib import Path

import yaml

from gateway.config.edit import EditRefused, NewModel, added, removed
from gateway.config.rewrite import FileChanged, rewrite
from gateway.config.settings import Config, ConfigError, load_config, parse_config

NEXT_STEP = "next: reload the running gateway: kill -HUP PID or POST /bench/reload"
EXAMPLES = (
    "\n  bench-gateway models add kimi2 --model openrouter/moonshotai/kimi-k2:free "
    "--api-key-env OPENROUTER_API_KEY --to reviewers"
    "\n  bench-gateway models remove kimi2"
)


class Refusal(Exception):
    """Nothing written; the message says why."""


class AlreadyBroken(ConfigError):
    """The config has problems before any edit: check-config's, named as it names them."""


def add_arguments(models: argparse.ArgumentParser) -> None:
    """`models add|remove`'s flags on the `models` parser (`discover` shares --connection and
    --config: each is defined once, by whoever comes first)."""
    models.add_argument("--model", metavar="PROVIDER/NAME", help="the model litellm calls (add)")
    models.add_argument("--api-base", metavar="URL", help="the provider's endpoint (add)")
    models.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="the variable holding its key, written as os.environ/VAR, never its value (add)",
    )
    models.add_argument("--role", help="general, code, light, vision or image (add)")
    models.add_argument("--to", metavar="COLLECTION", help="a collection it joins (add)")
    for flag, metavar, text in (
        ("--connection", "C", "what shares its rate limit (add; default: api_base's host:port)"),
        ("--config", "PATH", "the config file (default config/bench.yaml or $BENCH_CONFIG)"),
    ):
        with contextlib.suppress(argparse.ArgumentError):
            models.add_argument(flag, metavar=metavar, help=text)
    models.epilog = f"{models.epilog}{EXAMPLES}"


def usage_problem(args: argparse.Namespace) -> str | None:
    if not args.alias:
        return f"{args.action} needs the model's alias"
    if args.action == "add" and not args.model:
        return "add needs --model PROVIDER/NAME"
    return None


def run(args: argparse.Namespace, config_path: str) -> int:
    problem = usage_problem(args)
    if problem:
        print(f"bench-gateway models: {problem}", file=sys.stderr)
        return 2
    path = Path(config_path).resolve()  # a link's target is what is edited
    try:
        if args.action == "add":
            return _add(args, path, config_path)
        return _remove(args.alias, path, config_path)
    except Refusal as exc:
        print(f"bench-gateway models {args.action}: {exc}", file=sys.stderr)
    except (EditRefused, FileChanged) as exc:
        print(
            f"bench-gateway models {args.action}: {exc}; {config_path} is unchanged",
            file=sys.stderr,
        )
    except AlreadyBroken as exc:
        print(
            f"bench-gateway models {args.action}: {config_path} has problems already (as "
            "check-config names them); mend them first:",
            file=sys.stderr,
        )
        for line in exc.problems:
            print(f"  - {line}", file=sys.stderr)
    except ConfigError as exc:
        print(
            f"bench-gateway models {args.action}: check-config would refuse the result, so "
            f"{config_path} is unchanged:",
            file=sys.stderr,
        )
        for line in exc.problems:
            print(f"  - {line}", file=sys.stderr)
    except OSError as exc:  # the folder not writable, the disk full: the rename never came
        print(
            f"bench-gateway models {args.action}: cannot write {config_path}: "
            f"{exc.strerror or exc}; it is unchanged",
            file=sys.stderr,
        )
    except KeyboardInterrupt:
        print(f"bench-gateway models {args.action}: interrupted", file=sys.stderr)
    return 1


def _read(path: Path) -> tuple[bytes, str]:
    try:
        was = path.read_bytes()
        return was, was.decode("utf-8")
    except OSError as exc:
        raise Refusal(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise Refusal(f"{path} is not UTF-8 text") from None


def _add(args: argparse.Namespace, path: Path, shown: str) -> int:
    was, text = _read(path)
    _as_it_is(path)
    new = NewModel(
        args.alias,
        args.model,
        args.api_base,
        args.api_key_env,
        args.connection,
        args.role,
        to=args.to,
    )
    config = _parsed(added(text, new), path)  # refused here: before anyone is asked
    if args.api_key_env and args.api_key_env not in os.environ:
        raise Refusal(
            f"{args.api_key_env} is not set: the probe cannot reach {args.model} without its key "
            f"(export {args.api_key_env}=... and run the command again)"
        )
    from gateway.cli.probe_model import probe_model  # litellm: only once it is needed

    probe = asyncio.run(probe_model(config, args.alias))
    if probe.failed:
        raise Refusal(
            f"{args.alias} ({args.model}) did not answer, so nothing was written: {probe.failed}"
        )
    for line in probe.lines():
        print(line)
    if probe.window is not None:
        new = dataclasses.replace(new, context_window=probe.window)
    rewrite(path, was, added(text, new), _check)
    joined = f" (and to the members of collection {args.to})" if args.to else ""
    print(f"added {args.alias} to {shown}{joined}")
    print(NEXT_STEP)
    return 0


def _remove(alias: str, path: Path, shown: str) -> int:
    was, text = _read(path)
    _as_it_is(path)
    edited, left = removed(text, alias)
    rewrite(path, was, edited, _check)
    out_of = f" (and from the members of {', '.join(left)})" if left else ""
    print(f"removed {alias} from {shown}{out_of}")
    print(NEXT_STEP)
    return 0


def _as_it_is(path: Path) -> None:
    """The config must load before it is edited: its problems are not the edit's to hide."""
    try:
        load_config(path, secrets=False)
    except ConfigError as exc:
        raise AlreadyBroken(exc.problems) from None


def _parsed(text: str, path: Path) -> Config:
    """The new text as the gateway would read it (the loader's own steps, on the text)."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([f"the result is not valid YAML: {exc}"]) from None
    config = parse_config(raw, base=path.parent, path=path)
    _providers(config)
    return config


def _check(temp: Path) -> None:
    """What `check-config` runs, on the new file before it takes the old one's place."""
    _providers(load_config(temp))


def _providers(config: Config) -> None:
    from gateway.upstream.providers import check_providers

    check_providers(config)
