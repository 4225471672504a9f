"""Slack adapter: threads as rooms, Block Kit verdicts with buttons, `/arbiter`."""

from adapters.slack.runner import SlackAdapter, SlackStartError

__all__ = ["SlackAdapter", "SlackStartError"]
