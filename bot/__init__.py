"""Tribunal: the platform-neutral core (never imports Slack or Discord)."""

__version__ = "0.1.0"
