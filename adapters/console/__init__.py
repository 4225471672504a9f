"""The console adapter: a transcript replayed through the real engine, its
posts printed as they would appear in a thread (`tribunal replay`, `demo`)."""

from adapters.console.replay import DEFAULT_ROOM, ROOM_OVERRIDES, Replayer
from adapters.console.transport import ConsoleTransport, human_printer, json_printer, say
from bot.transcript import TranscriptError

__all__ = ["DEFAULT_ROOM", "ROOM_OVERRIDES", "ConsoleTransport", "Replayer", "TranscriptError",
           "human_printer", "json_printer", "say"]
