"""Why a panel cannot be chosen. The gateway turns each into an HTTP refusal."""


def echo(name: str, limit: int = 100) -> str:
    """A name from the request, cut to *limit* characters for a refusal message: a
    10,000-character model name is not worth sending back whole."""
    return name if len(name) <= limit else name[:limit] + "…"


class Refusal(Exception):
    """A request that seats nobody; `param` names the offending request field, if any."""

    param: str | None = None

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if param is not None:
            self.param = param


class UnknownCollection(Refusal):
    param = "model"


class UnknownShape(Refusal):
    param = "X-Panel-Shape"


class UnknownAlias(Refusal):
    param = "with"


class PromptTooLarge(Refusal):
    param = "messages"


class NothingToSeat(Refusal):
    pass
