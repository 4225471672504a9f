"""Settings from the environment (`TRIBUNAL_*`, `.env`) and an optional TOML file.

Everything is checked when a command starts (`load_settings`): a wrong type, a
value out of range, a misspelt TOML key, a retired setting or a backend without
what it needs stops the start with a message naming the variable or key. Room
settings (`/arbiter`, transcripts, the database) go through the same rules
(`RoomSettings`), so a value that would be refused at start is never stored.

Secrets are `SecretStr` so they never show up in a repr or a log line.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from bot.faults import FAULT_ENV
from prompts import languages

ENV_PREFIX = "TRIBUNAL_"

# Settings that existed once. Naming one is an error with this hint rather than
# a silent no-op: whoever set it expects it to do something.
RETIRED: dict[str, str] = {
    "similarity_threshold": (
        "progress is no longer tuned by a similarity threshold (the deadlock detector "
        "tracks the reviewer's findings instead); remove it"
    ),
}

# Ranges of the room tunables; `/arbiter threshold` and `max-rounds` use the same.
STALL_THRESHOLD_RANGE = (1, 20)
MAX_ROUNDS_RANGE = (1, 50)


def _shipped_language(value: str) -> str:
    code = value.strip().lower()
    shipped = languages()
    if code not in shipped:
        raise ValueError(f"unknown language {value!r} (shipped: {', '.join(shipped)})")
    return code


def _url(schemes: tuple[str, ...]) -> AfterValidator:
    def check(value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in schemes or not parts.netloc:
            raise ValueError(f"expected a {' or '.join(s + '://' for s in schemes)} URL")
        return value.strip()

    return AfterValidator(check)


StallThreshold = Annotated[
    int, Field(ge=STALL_THRESHOLD_RANGE[0], le=STALL_THRESHOLD_RANGE[1])
]
MaxRounds = Annotated[int, Field(ge=MAX_ROUNDS_RANGE[0], le=MAX_ROUNDS_RANGE[1])]
MaxArbitrations = Annotated[int, Field(ge=1, le=100)]
QuietSeconds = Annotated[float, Field(gt=0, le=3600)]
ReminderAfter = Annotated[float, Field(ge=60, le=30 * 86400)]
Language = Annotated[str, AfterValidator(_shipped_language)]
Port = Annotated[int, Field(ge=1, le=65535)]
HttpUrl = Annotated[str, _url(("http", "https"))]
WsUrl = Annotated[str, _url(("ws", "wss"))]
NonEmpty = Annotated[str, Field(min_length=1)]


class RoomSettings(BaseModel):
    """The tunables a room, a channel or the TOML `[defaults]` may set (all optional).

    Strict: a transcript's `"stall_threshold": "2"` or `true` is a mistake to
    report, not a value to guess at.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    stall_threshold: StallThreshold | None = None
    max_rounds: MaxRounds | None = None
    max_arbitrations: MaxArbitrations | None = None
    turn_quiet_seconds: QuietSeconds | None = None
    language: Language | None = None
    reminder_after: ReminderAfter | None = None


TUNABLE: tuple[str, ...] = tuple(RoomSettings.model_fields)


class SettingsError(ValueError):
    """One or more settings are invalid; `problems` name each variable or key.

    `warnings` are what a successful load would have logged (an unknown
    variable is often the misspelling behind the problem).
    """

    def __init__(self, problems: list[str], warnings: list[str] | None = None) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
        self.warnings = warnings or []


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChannelBinding(_Strict):
    """Role bindings of one watched channel, from the TOML file."""

    platform: Literal["slack", "discord", "console"]
    channel: NonEmpty
    owner: list[str] = Field(default_factory=list)
    reviewer: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)


class MoAModel(_Strict):
    """One reference model for mixture-of-agents; its key comes from `api_key_env`."""

    name: NonEmpty
    backend: Literal["openai", "anthropic"] = "openai"
    model: NonEmpty
    base_url: HttpUrl | None = None
    api_key_env: str | None = None
    timeout: float = Field(default=30.0, gt=0, le=600)


class FileConfig(_Strict):
    """What `TRIBUNAL_CONFIG` may hold. Never secrets: those stay in the environment."""

    defaults: RoomSettings = Field(default_factory=RoomSettings)
    channels: list[ChannelBinding] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    moa: list[MoAModel] = Field(default_factory=list)


def _split_ids(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return [str(v).strip() for v in value if str(v).strip()]


def _shards_named(ids: list[int]) -> str:
    return (f"shard {ids[0]} is" if len(ids) == 1
            else f"shards {', '.join(map(str, ids))} are")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_file=".env", extra="ignore"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, in the usual order, less a `.env` that holds nothing
        (none, or an empty one): reading every field through it again costs a
        start about as much as the environment itself and adds nothing."""
        if isinstance(dotenv_settings, DotEnvSettingsSource) and not dotenv_settings.env_vars:
            return init_settings, env_settings, file_secret_settings
        return init_settings, env_settings, dotenv_settings, file_secret_settings

    database: NonEmpty = "./tribunal.db"
    config: Path | None = None
    language: Language = "ko"

    arbiter_backend: Literal["none", "openai", "anthropic", "command"] = "none"
    arbiter_model: str | None = None
    arbiter_base_url: HttpUrl | None = None
    arbiter_api_key: SecretStr | None = None
    arbiter_command: str | None = None
    arbiter_workdir: str | None = None
    arbiter_timeout: float = Field(default=60.0, gt=0, le=3600)
    arbiter_retries: int = Field(default=2, ge=0, le=10)
    arbiter_concurrency: int = Field(default=4, ge=1, le=64)
    arbiter_max_prompt_chars: int = Field(default=60_000, ge=4_000, le=1_000_000)
    arbiter_context_turns: int = Field(default=8, ge=2, le=100)
    moa_allow_private: bool = False

    stall_threshold: StallThreshold = 2
    max_rounds: MaxRounds = 6
    max_arbitrations: MaxArbitrations = 3
    turn_quiet_seconds: QuietSeconds = 3.0
    reminder_after: ReminderAfter = 4 * 3600.0

    progress_judge: Literal["rules", "llm"] = "rules"
    progress_judge_timeout: float = Field(default=10.0, gt=0, le=600)
    # Several reviewers: a reviewer turn waits this long in silence for the
    # task's reviewers who have not spoken in it yet (bot.transitions.turn_thresholds).
    reviewer_wait_seconds: float = Field(default=300.0, gt=0, le=86_400)
    lease_seconds: float = Field(default=30.0, ge=5, le=3600)
    human_messages: int = Field(default=20, ge=1, le=500)
    metrics_port: Port | None = None
    metrics_host: NonEmpty = "127.0.0.1"
    log_format: Literal["text", "json"] = "text"

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
    slack_api_url: HttpUrl | None = None
    http_port: Port = 3000
    http_host: NonEmpty = "0.0.0.0"

    discord_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN", "discord_bot_token")
    )
    discord_guild_ids: Annotated[list[str], NoDecode] = Field(default_factory=list)
    discord_api_url: HttpUrl | None = None
    discord_gateway_url: WsUrl | None = None
    discord_shard_count: int | None = Field(default=None, ge=1, le=10_000)
    discord_shard_ids: Annotated[list[Annotated[int, Field(ge=0)]], NoDecode] = Field(
        default_factory=list
    )

    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key")
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("ANTHROPIC_API_KEY", "anthropic_api_key")
    )

    @field_validator("admin_ids", "discord_guild_ids", "discord_shard_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> list[str]:
        return _split_ids(value)

    @model_validator(mode="after")
    def _shards(self) -> Settings:
        ids = self.discord_shard_ids
        if not ids:
            return self
        if self.discord_shard_count is None:
            raise ValueError(
                "TRIBUNAL_DISCORD_SHARD_IDS needs TRIBUNAL_DISCORD_SHARD_COUNT (the total)"
            )
        count = self.discord_shard_count
        outside = sorted({i for i in ids if i >= count})
        twice = sorted({i for i in ids if ids.count(i) > 1})
        wrong = []
        if outside:
            wrong.append(f"{_shards_named(outside)} not below TRIBUNAL_DISCORD_SHARD_COUNT="
                         f"{count} (its shards are 0 to {count - 1})")
        if twice:
            wrong.append(f"{_shards_named(twice)} named twice")
        if wrong:
            raise ValueError(f"TRIBUNAL_DISCORD_SHARD_IDS={','.join(map(str, ids))}: "
                             + "; ".join(wrong))
        return self

    def api_key(self) -> str | None:
        """The arbiter key, falling back to the vendor's own variable."""
        if self.arbiter_api_key is not None:
            return self.arbiter_api_key.get_secret_value()
        fallback = (
            self.anthropic_api_key if self.arbiter_backend == "anthropic" else self.openai_api_key
        )
        return fallback.get_secret_value() if fallback is not None else None

    @property
    def progress_judge_in_effect(self) -> Literal["rules", "llm"]:
        """`llm` needs a model to ask; without a backend the rules judge."""
        return "rules" if self.arbiter_backend == "none" else self.progress_judge

    def file_config(self) -> FileConfig:
        if self.config is None:
            return FileConfig()
        import tomllib  # only with a file to read

        with open(self.config, "rb") as fh:
            return FileConfig.model_validate(tomllib.load(fh))

    def room_defaults(self) -> dict[str, Any]:
        """Global tunables (what `room -> channel -> global` falls back to)."""
        base: dict[str, Any] = {name: getattr(self, name) for name in TUNABLE}
        # The TOML file's [defaults] beat the built-in defaults; a variable set
        # in the environment (or given explicitly) beats the file.
        base.update(self.file_config().defaults.model_dump(exclude_none=True))
        explicit = self.model_fields_set
        base.update({name: getattr(self, name) for name in TUNABLE if name in explicit})
        return base


# -- explaining what is wrong ---------------------------------------------------

_SECRET_FIELDS = frozenset(
    name for name, info in Settings.model_fields.items() if SecretStr in get_args(info.annotation)
)
_VOCABULARY = sorted(
    {*Settings.model_fields, *TUNABLE, *FileConfig.model_fields, *ChannelBinding.model_fields,
     *MoAModel.model_fields}
)


def env_name(field: str) -> str:
    """The environment variable a Settings field is read from."""
    info = Settings.model_fields.get(field)
    if info is not None and isinstance(info.validation_alias, AliasChoices):
        return str(info.validation_alias.choices[0])
    return ENV_PREFIX + field.upper()


def _known_env_names() -> set[str]:
    # TRIBUNAL_FAULT is no setting: the crash tests' fault hook (bot/faults.py).
    return {env_name(field) for field in Settings.model_fields} | {FAULT_ENV}


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _keys_at(model: type[BaseModel] | None, path: Iterable[int | str]) -> list[str]:
    """The keys allowed where `path` points inside `model` (for "did you mean")."""
    for part in path:
        if model is None:
            return []
        if isinstance(part, int):
            continue  # an item of a list of tables
        info = model.model_fields.get(part)
        model = _model_in(info.annotation) if info is not None else None
    return list(model.model_fields) if model is not None else []


def explain(
    error: ErrorDetails, *, show_input: bool = True, model: type[BaseModel] | None = None
) -> str:
    """One pydantic error as a phrase about its key (the caller names the key).

    `model` is what was validated: a misspelt key is then matched against the
    keys allowed at its own place (`[[channel]]` -> `channels`, not `channel`).
    """
    loc = error["loc"]
    name = str(loc[-1]) if loc else ""
    if error["type"] == "extra_forbidden":
        if name in RETIRED:
            return f"is no longer a setting: {RETIRED[name]}"
        keys = _keys_at(model, loc[:-1]) if model is not None else _VOCABULARY
        from difflib import get_close_matches  # a mistake to explain: rare

        close = get_close_matches(name, keys, n=1, cutoff=0.75)
        return "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "")
    message = str(error["msg"]).removeprefix("Value error, ")
    if message[:1].isupper() and message[1:2].islower():  # pydantic's "Input should ..."
        message = message[:1].lower() + message[1:]
    value = error.get("input")
    if show_input and error["type"] != "value_error" and isinstance(value, str | int | float):
        shown = repr(value)
        message += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
    return message


def _settings_problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        loc = error["loc"]
        if not loc:  # a check across several settings names them itself
            problems.append(explain(error, show_input=False))
            continue
        field = str(loc[0])
        name = env_name(field) if field in Settings.model_fields else field
        secret = name in {env_name(f) for f in _SECRET_FIELDS}
        problems.append(f"{name}: {explain(error, show_input=not secret)}")
    return problems


def toml_location(loc: Iterable[int | str]) -> str:
    """('channels', 0, 'platform') -> '[[channels]] #1 platform'."""
    parts = list(loc)
    if not parts:
        return "file"
    head, rest = str(parts[0]), parts[1:]
    if head in ("channels", "moa") and rest and isinstance(rest[0], int):
        where = f"[[{head}]] #{rest[0] + 1}"
        rest = rest[1:]
    elif head == "defaults" and rest:
        where = "[defaults]"
    else:
        return ".".join(str(p) for p in parts)
    return " ".join([where, *(str(p) for p in rest)])


def _file_problems(settings: Settings) -> list[str]:
    if settings.config is None:
        return []
    import tomllib

    where = f"TRIBUNAL_CONFIG ({settings.config})"
    try:
        file = settings.file_config()
    except ValidationError as exc:
        return [
            f"{where}: {toml_location(e['loc'])}: {explain(e, model=FileConfig)}"
            for e in exc.errors()
        ]
    except tomllib.TOMLDecodeError as exc:
        return [f"{where}: not valid TOML: {exc}"]
    except OSError as exc:
        return [f"{where}: cannot read: {exc.strerror}"]
    problems = []
    for n, ref in enumerate(file.moa, start=1):
        if ref.api_key_env is not None and not ref.api_key_env.strip():
            problems.append(f"{where}: [[moa]] #{n} api_key_env: empty variable name")
    return problems


def _backend_problems(settings: Settings) -> list[str]:
    backend = settings.arbiter_backend
    if backend == "command":
        command = (settings.arbiter_command or "").strip()
        if not command:
            return [
                "TRIBUNAL_ARBITER_BACKEND=command needs TRIBUNAL_ARBITER_COMMAND (a command "
                "line that reads the prompt on stdin and writes the verdict, e.g. `claude -p`)"
            ]
        try:
            shlex.split(command)
        except ValueError as exc:
            return [f"TRIBUNAL_ARBITER_COMMAND: cannot be split into words ({exc})"]
        workdir = settings.arbiter_workdir
        if workdir and not os.path.isdir(workdir):
            return [f"TRIBUNAL_ARBITER_WORKDIR: no such directory ({workdir!r})"]
        return []
    if backend not in ("openai", "anthropic") or settings.api_key():
        return []
    if backend == "openai" and settings.arbiter_base_url and not _is_openai_cloud(
        settings.arbiter_base_url
    ):
        return []  # a self-hosted OpenAI-compatible server (Ollama, vLLM) may need no key
    vendor = "OPENAI_API_KEY" if backend == "openai" else "ANTHROPIC_API_KEY"
    hint = (
        " (or point TRIBUNAL_ARBITER_BASE_URL at a self-hosted OpenAI-compatible server,"
        " which may run without a key)"
        if backend == "openai"
        else ""
    )
    return [
        f"TRIBUNAL_ARBITER_BACKEND={backend} needs a key: set TRIBUNAL_ARBITER_API_KEY or "
        f"{vendor}{hint}"
    ]


def _is_openai_cloud(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    return host == "openai.com" or host.endswith(".openai.com")


def _names_in(env_file: str | Path | None) -> list[str]:
    """Names set in the process environment and in the `.env` file, upper-cased."""
    names = [name.upper() for name in os.environ]
    if env_file is not None and Path(env_file).is_file():
        from dotenv import dotenv_values

        names += [name.upper() for name in dotenv_values(env_file)]
    return names


def _name_problems(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(errors for retired TRIBUNAL_* names, warnings for unknown ones)."""
    known = _known_env_names()
    errors, warnings = [], []
    for name in sorted(set(names)):
        if not name.startswith(ENV_PREFIX) or name in known:
            continue
        key = name.removeprefix(ENV_PREFIX).lower()
        if key in RETIRED:
            errors.append(f"{name} is no longer a setting: {RETIRED[key]}")
            continue
        if key in Settings.model_fields:  # e.g. TRIBUNAL_SLACK_BOT_TOKEN
            close = [env_name(key)]
        else:
            from difflib import get_close_matches

            close = get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        warnings.append(
            f"{name} is not a Tribunal setting and is ignored"
            + (f" (did you mean {close[0]}?)" if close else "")
        )
    return errors, warnings


def load_settings(env_file: str | Path | None = ".env") -> tuple[Settings, list[str]]:
    """Settings checked for a start: (settings, warnings to log) or SettingsError.

    Every problem is reported at once, so one start shows all there is to fix.
    """
    problems, warnings = _name_problems(_names_in(env_file))
    try:
        settings = Settings(_env_file=env_file)  # type: ignore[call-arg]
    except ValidationError as exc:
        problems += _settings_problems(exc)
        # The rest is still worth checking: the bad values replaced by defaults.
        stand_ins: dict[str, Any] = {"discord_shard_ids": []}
        for error in exc.errors():
            field = str(error["loc"][0]) if error["loc"] else ""
            if field in Settings.model_fields:
                stand_ins[field] = Settings.model_fields[field].get_default(
                    call_default_factory=True
                )
        try:
            settings = Settings(_env_file=env_file, **stand_ins)  # type: ignore[call-arg]
        except ValidationError:
            raise SettingsError(problems, warnings) from None
    problems += _file_problems(settings)
    problems += _backend_problems(settings)
    if problems:
        raise SettingsError(problems, warnings)
    if settings.progress_judge == "llm" and settings.progress_judge_in_effect == "rules":
        warnings.append(
            "TRIBUNAL_PROGRESS_JUDGE=llm needs an arbiter backend; TRIBUNAL_ARBITER_BACKEND is "
            "none, so the rules judge progress"
        )
    return settings, warnings


# -- room settings ----------------------------------------------------------------


def check_room_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """Validated room settings, unset ones left out; SettingsError names each bad key."""
    try:
        checked = RoomSettings.model_validate(dict(values))
    except ValidationError as exc:
        raise SettingsError(
            [
                f"{'.'.join(str(p) for p in e['loc'])}: {explain(e, model=RoomSettings)}"
                for e in exc.errors()
            ]
        ) from None
    return checked.model_dump(exclude_none=True)


def usable_room_settings(values: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Stored settings that still pass today's rules, and a note for each that does not.

    Values stored by an older release may be out of range or retired; the
    caller falls back to the default for those instead of failing the room.
    """
    good: dict[str, Any] = {}
    notes = []
    for key, value in values.items():
        if key in RETIRED:
            notes.append(f"{key} is no longer a setting; ignored")
            continue
        if key not in TUNABLE:
            continue
        try:
            good.update(check_room_settings({key: value}))
        except SettingsError as exc:
            notes.append(f"{exc}; the default is used")
    return good, notes
