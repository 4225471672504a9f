"""Settings from the environment (`TRIBUNAL_*`, `.env`) and an optional TOML file.

Secrets are `SecretStr` so they never show up in a repr or a log line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class ChannelBinding(BaseModel):
    """Role bindings of one watched channel, from the TOML file."""

    platform: str
    channel: str
    owner: list[str] = Field(default_factory=list)
    reviewer: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)


class MoAModel(BaseModel):
    """One reference model for mixture-of-agents; its key comes from `api_key_env`."""

    name: str
    backend: Literal["openai", "anthropic"] = "openai"
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = 30.0


class FileConfig(BaseModel):
    """What `TRIBUNAL_CONFIG` may hold. Never secrets: those stay in the environment."""

    defaults: dict[str, Any] = Field(default_factory=dict)
    channels: list[ChannelBinding] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    moa: list[MoAModel] = Field(default_factory=list)


def _split_ids(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(v).strip() for v in value if str(v).strip()]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TRIBUNAL_", env_file=".env", extra="ignore"
    )

    database: str = "./tribunal.db"
    config: Path | None = None
    language: str = "ko"

    arbiter_backend: Literal["none", "openai", "anthropic", "command"] = "none"
    arbiter_model: str | None = None
    arbiter_base_url: str | None = None
    arbiter_api_key: SecretStr | None = None
    arbiter_command: str | None = None
    arbiter_workdir: str | None = None
    arbiter_timeout: float = 60.0
    arbiter_retries: int = 2
    arbiter_concurrency: int = 4
    arbiter_max_prompt_chars: int = 60_000
    arbiter_context_turns: int = 8
    moa_allow_private: bool = False

    stall_threshold: int = 2
    max_rounds: int = 6
    max_arbitrations: int = 3
    turn_quiet_seconds: float = 3.0
    similarity_threshold: float = 0.5
    reminder_after: float = 4 * 3600.0

    admin_ids: Annotated[list[str], NoDecode] = Field(default_factory=list)

    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "slack_bot_token")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "slack_app_token")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "slack_signing_secret"),
    )
    slack_mode: Literal["socket", "http"] = "socket"
    slack_api_url: str | None = None
    http_port: int = 3000
    http_host: str = "0.0.0.0"

    discord_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN", "discord_bot_token")
    )
    discord_guild_ids: Annotated[list[str], NoDecode] = Field(default_factory=list)
    discord_api_url: str | None = None
    discord_gateway_url: str | None = None

    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "anthropic_api_key")
    )

    @field_validator("admin_ids", "discord_guild_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        return _split_ids(value)

    def api_key(self) -> str | None:
        """The arbiter key, falling back to the vendor's own variable."""
        if self.arbiter_api_key is not None:
            return self.arbiter_api_key.get_secret_value()
        fallback = (
            self.anthropic_api_key if self.arbiter_backend == "anthropic" else self.openai_api_key
        )
        return fallback.get_secret_value() if fallback is not None else None

    def file_config(self) -> FileConfig:
        if self.config is None:
            return FileConfig()
        with open(self.config, "rb") as fh:
            return FileConfig.model_validate(tomllib.load(fh))

    def room_defaults(self) -> dict[str, Any]:
        """Global tunables (what `room -> channel -> global` falls back to)."""
        names = (
            "stall_threshold", "max_rounds", "max_arbitrations", "turn_quiet_seconds",
            "similarity_threshold", "language", "reminder_after",
        )
        base: dict[str, Any] = {name: getattr(self, name) for name in names}
        # The TOML file's [defaults] beat the built-in defaults; a variable set
        # in the environment (or given explicitly) beats the file.
        base.update({k: v for k, v in self.file_config().defaults.items() if k in names})
        base.update({name: getattr(self, name) for name in names if name in self.model_fields_set})
        return base
