"""Text the core can always store: the one repair, applied where text enters.

Platform payloads and model answers are JSON, and JSON may carry what UTF-8
cannot: `"\\ud800"` decodes to a lone surrogate, which SQLite (and every
UTF-8 encoder after it) refuses, and `"\\u0000"` to a NUL, which cuts C strings
short. Such a message would be acknowledged to the platform and then lost at
insert; such a model answer would fail the verdict's record again on every
recovery. So each one becomes U+FFFD, once, at the core's entry points (the
inbound models' validators, the arbiter's reading of a backend's answer), and
nothing after them has to care.

A high surrogate directly followed by a low one is not lone: together they
are one character (as a JSON decoder would have read them), and are kept as it.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def repair_text(text: str) -> str:
    """`text` with every lone surrogate and NUL replaced by U+FFFD; idempotent."""
    if _UNSTORABLE.search(text) is None:
        return text  # the common case costs one scan and no copy
    if "\x00" in text:
        text = text.replace("\x00", REPLACEMENT)
    # UTF-16 with surrogatepass turns a surrogate pair back into its character
    # and leaves each lone surrogate as two bytes its decoder replaces once.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _repair_value(value: Any) -> Any:
    # Before pydantic's own validation: anything that is not a str is left for
    # it to accept or refuse.
    return repair_text(value) if isinstance(value, str) else value


# A str field of a model through which text enters the core.
RepairedStr = Annotated[str, BeforeValidator(_repair_value)]
