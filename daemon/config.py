"""User configuration: a TOML file -> a validated, frozen :class:`Config`.

Every option is declared once, as a field of :class:`Config` with its default,
a one-line description and a validator; the commented template written on
first run, the validation and the defaults all come from those declarations,
so they cannot drift apart.  Invalid files raise :class:`ConfigError`, which
lists every problem as ``file:line: key: message`` (the line is found in the
file's text; TOML syntax errors carry their own).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from daemon.atomic_write import replace_text
from daemon.backends.served.endpoint import cleartext_problem
from daemon.capture.keymap import KeySpecError, normalize_key_spec
from daemon.cpc.limits import float_range as _float_range
from daemon.cpc.limits import int_range as _int_range
from daemon.cpc.limits import is_int as _is_int
from daemon.cpc.limits import kind_of as _show
from daemon.cpc.limits import limit, span
from daemon.cpc.suggestion import STRATEGIES, BeamParams

APP_NAME = "ghosttype"
CONFIG_FILENAME = "config.toml"
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
#: ``auto``: suggest while the model runs in ghosttype, skip when a server is
#: configured (text from a field of unknown kind would leave the machine: a
#: terminal's sudo or ssh password prompt looks like any other text there).
UNKNOWN_FIELDS = ("auto", "suggest", "skip")
IBUS_DISPLAYS = ("auto", "preedit", "popup")
BACKENDS = ("local", "server")
SERVER_ENGINES = ("llama.cpp", "vllm")
SERVER_FALLBACKS = ("local", "none")
#: ``learn``: what ghosttype keeps of the user's words to suggest them back (daemon.memory):
#: in memory while it runs, also across restarts (one encrypted file), or nothing.
LEARN_MODES = ("session", "persist", "off")

#: Password managers, keyrings and passphrase prompts (X11 WM_CLASS class, lower
#: case, and executable names); ghosttype neither captures nor suggests there.
DEFAULT_DENYLIST: tuple[str, ...] = (
    "keepassxc", "keepass2", "keepass", "1password", "bitwarden", "enpass", "proton pass",
    "lastpass", "dashlane", "nordpass", "kwalletmanager5", "kwalletd5", "kwalletd6",
    "seahorse", "gcr-prompter", "gnome-keyring-prompt", "pinentry", "pinentry-gtk-2",
    "pinentry-gnome3", "pinentry-qt", "pinentry-qt5", "ssh-askpass", "x11-ssh-askpass",
    "ksshaskpass", "lxqt-openssh-askpass", "polkit-gnome-authentication-agent-1",
    "polkit-kde-authentication-agent-1", "lxpolkit",
)

#: The settings that are the decoder's knobs (:class:`~daemon.cpc.suggestion.BeamParams`
#: fields of the same name): the one mapping between a config and a request's parameters.
DECODER_SETTINGS = ("strategy", "beam_width", "max_tokens", "confidence_threshold", "continue_min_prob",
                    "single_line", "context_chars")

Check = Callable[[Any], Optional[str]]  # value -> error message, or None when valid (daemon.cpc.limits.Check)


# --------------------------------------------------------------------------- validators


def _bool(v: Any) -> Optional[str]:
    return None if isinstance(v, bool) else f"expected true or false, got {_show(v)}"


def _choice(options: Iterable[str]) -> Check:
    opts = tuple(options)

    def check(v: Any) -> Optional[str]:
        if not isinstance(v, str):
            return f"expected a string, got {_show(v)}"
        return None if v in opts else f"must be one of {', '.join(opts)}; got {v!r}"

    return check


def _nonempty_str(v: Any) -> Optional[str]:
    if not isinstance(v, str):
        return f"expected a string, got {_show(v)}"
    return None if v.strip() else "must not be empty"


def _key_spec(v: Any) -> Optional[str]:
    if not isinstance(v, str):
        return f"expected a key like \"tab\" or \"ctrl+right\", got {_show(v)}"
    try:
        normalize_key_spec(v)
    except KeySpecError as e:
        return str(e)
    return None


def _optional_key_spec(v: Any) -> Optional[str]:
    return None if v == "" else _key_spec(v)


def _url(v: Any) -> Optional[str]:
    if not isinstance(v, str):
        return f"expected a string, got {_show(v)}"
    if v and not re.match(r"https?://[^/\s]+(/\S*)?$", v):
        return f"must look like http://host:port or https://host/path, got {v!r}"
    return None


def _any_str(v: Any) -> Optional[str]:
    return None if isinstance(v, str) else f"expected a string, got {_show(v)}"


def _str_list(v: Any) -> Optional[str]:
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        return f"expected a list of strings, got {_show(v)}"
    return None


def _opt(default: Any, doc: str, check: Check) -> Any:
    """A config field: its default, its description (for the template) and its validator."""
    return field(default=default, metadata={"doc": doc, "check": check})


# --------------------------------------------------------------------------- the config


@dataclass(frozen=True)
class Config:
    """All user settings (immutable: a reload builds a new one)."""

    enabled: bool = _opt(True, "Suggest at all (also toggled from the tray).", _bool)
    model: str = _opt("smollm2", "Model name (smollm2, qwen2.5-coder-0.5b, gemma3-270m) or a path to a GGUF file.",
                      _nonempty_str)
    code_model: str = _opt("", "Model for fields whose text looks like code (indented lines, brackets), e.g. "
                               "qwen2.5-coder-0.5b; \"\": the one model everywhere. It runs in ghosttype (not on a "
                               "server) and takes memory of its own (about 0.5 GB for Qwen2.5-Coder).", _any_str)
    strategy: str = _opt("cpc", "Decoding strategy: cpc (default), heal or naive.", _choice(STRATEGIES))
    beam_width: int = _opt(2, f"Beams kept while matching the typed part of a word ({span('beam_width')}).",
                           limit("beam_width"))
    confidence_threshold: float = _opt(
        BeamParams().confidence_threshold,
        f"Hide suggestions less likely than this ({span('confidence_threshold')}) to be accepted; 0 shows everything.",
        limit("confidence_threshold"))
    continue_min_prob: float = _opt(
        BeamParams().continue_min_prob,
        f"Suggest words after the first while the chance that all of it is right stays above this "
        f"({span('continue_min_prob')}); 0 always goes on to max_tokens.",
        limit("continue_min_prob"))
    max_tokens: int = _opt(8, f"Longest suggestion, in model tokens ({span('max_tokens')}).", limit("max_tokens"))
    debounce_ms: int = _opt(15, "Wait this long after a keystroke before asking the model (0-2000 ms).",
                            _int_range(0, 2000))
    buffer_chars: int = _opt(2000, "Characters before the caret kept in memory (100-100000).",
                             _int_range(100, 100_000))
    context_chars: int = _opt(1500, f"Most characters before the caret given to the model "
                                    f"({span('context_chars')}); fewer is faster.", limit("context_chars"))
    threads: int = _opt(0, "CPU threads the model always uses (0 means automatic: half the cores, at most 4); "
                           "decodes also take the cores other programs leave idle.",
                        _int_range(0, 64))
    single_line: bool = _opt(True, "Stop suggestions at the end of the line.", _bool)
    accept_key: str = _opt("tab", "Key that inserts the whole suggestion (swallowed only while one is visible).",
                           _key_spec)
    accept_word_key: str = _opt("ctrl+right", "Key that inserts the next word of the suggestion.", _key_spec)
    dismiss_key: str = _opt("escape", "Key that hides the suggestion (it still reaches the application).",
                            _key_spec)
    pause_key: str = _opt("ctrl+alt+g", "Key that pauses and resumes ghosttype everywhere (\"\" for none).",
                          _optional_key_spec)
    denylist: tuple[str, ...] = _opt(
        DEFAULT_DENYLIST,
        "Applications where nothing is captured or suggested (X11 WM_CLASS class, Wayland app id or executable name).",
        _str_list)
    unknown_fields: str = _opt(
        "auto", "When a field cannot be identified as a password field or not (terminals, applications without "
        "accessibility): suggest, skip, or auto (suggest with a local model, skip with a server).",
        _choice(UNKNOWN_FIELDS))
    ibus_display: str = _opt(
        "auto", "IBus engine: show the suggestion as grey preedit text after the caret, or as a popup at the "
        "caret; auto picks the popup where the preedit cannot be grey (GNOME Shell on Wayland).",
        _choice(IBUS_DISPLAYS))
    ibus_terminals: str = _opt(
        "auto", "IBus engine: fields that say they are terminals (where sudo and ssh ask for passwords): auto "
        "(suggest with a local model once the terminal shows the typed keys on a line that asks for no password; "
        "nothing where it shows no text, or with a server), suggest (also where it shows no text: a password typed "
        "at a prompt then reaches the model), or skip.", _choice(UNKNOWN_FIELDS))
    backend: str = _opt("local", "Where suggestions come from: local (the model runs in ghosttype) or server "
                                 "(a serving engine at server_url; what you type is sent there).", _choice(BACKENDS))
    server_url: str = _opt("", "Serving engine used by the server backend: https://host, or http://host:port on "
                               "this machine (OpenAI-compatible /v1/completions).", _url)
    allow_insecure_http: bool = _opt(False, "Accept an http:// server_url on another machine: what you type and "
                                            "the token then cross the network in clear.", _bool)
    server_engine: str = _opt("llama.cpp", "The engine at server_url: llama.cpp (llama-server, llama_cpp.server) or "
                                           "vllm.", _choice(SERVER_ENGINES))
    server_model: str = _opt("", "Model name sent to the server (\"\": the server's default).", _any_str)
    server_token_file: str = _opt("", "File holding the server's bearer token (\"\": none).", _any_str)
    server_ca_file: str = _opt("", "CA certificates for an https server_url (\"\": the system's); TLS is always "
                                   "verified.", _any_str)
    server_deadline_ms: int = _opt(250, "A request whose first word has not arrived after this long is answered "
                                        "locally (20-10000 ms).", _int_range(20, 10_000))
    server_logprobs: bool = _opt(True, "Ask the server for log-probabilities, which the confidence gate needs "
                                       "(false: no gate; llama-cpp-python's server is much faster without them).", _bool)
    server_fallback: str = _opt("local", "While the server is unreachable or slow: local (use the local model) or "
                                         "none (no suggestions).", _choice(SERVER_FALLBACKS))
    log_level: str = _opt("warning", "Log level: debug, info, warning, error or critical.", _choice(LOG_LEVELS))
    stats: bool = _opt(True, "Count suggestions shown and accepted and the keystrokes they saved (numbers only, "
                             "never text; ghosttype stats shows them, --reset clears them).", _bool)
    learn: str = _opt("session", "Learn the words you type to suggest them back: session (kept in memory only, "
                                 "gone when ghosttype stops), persist (also kept across restarts in one encrypted "
                                 "file whose key the desktop's keyring holds; without an unlocked keyring: session), "
                                 "or off. ghosttype forget wipes what was learned.", _choice(LEARN_MODES))

    def __post_init__(self) -> None:
        issues = [ConfigIssue(f.name, msg) for f, msg in _field_errors(self)]
        if self.backend == "server" and not self.server_url:
            issues.append(ConfigIssue("server_url", 'backend = "server" needs a server_url'))
        elif self.backend == "server" and not issues:
            cleartext = cleartext_problem(self.server_url, self.allow_insecure_http)
            if cleartext:
                issues.append(ConfigIssue("server_url", cleartext))
        if issues:
            raise ConfigError(issues)
        # Canonical forms, so comparisons elsewhere are plain string equality.
        object.__setattr__(self, "denylist", tuple(sorted({s.strip().lower() for s in self.denylist if s.strip()})))
        for name in ("accept_key", "accept_word_key", "dismiss_key"):
            object.__setattr__(self, name, normalize_key_spec(getattr(self, name)))
        if self.pause_key:
            object.__setattr__(self, "pause_key", normalize_key_spec(self.pause_key))
        object.__setattr__(self, "confidence_threshold", float(self.confidence_threshold))
        object.__setattr__(self, "continue_min_prob", float(self.continue_min_prob))

    # ------------------------------------------------------------------ builders

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], path: Optional[Union[str, pathlib.Path]] = None,
                     text: Optional[str] = None) -> "Config":
        """Validate ``data`` (a parsed TOML document); on problems raise
        :class:`ConfigError` with line numbers found in ``text``."""
        known = {f.name: f for f in dataclasses.fields(cls)}
        issues: list[ConfigIssue] = []
        values: dict[str, Any] = {}
        for key, value in data.items():
            line = _line_of(text, key) if text is not None else None
            f = known.get(key)
            if f is None:
                close = _closest(key, known)
                hint = f" (did you mean {close}?)" if close else ""
                issues.append(ConfigIssue(key, f"unknown setting{hint}", line))
                continue
            msg = f.metadata["check"](value)
            if msg:
                issues.append(ConfigIssue(key, msg, line))
            else:
                values[key] = tuple(value) if isinstance(value, list) else value
        if issues:
            raise ConfigError(issues, path)
        return cls(**values)

    def with_overrides(self, **flags: Any) -> "Config":
        """A copy with command-line values applied (``None`` = flag not given)."""
        given = {k: v for k, v in flags.items() if v is not None}
        known = {f.name: f for f in dataclasses.fields(self)}
        issues = []
        for key, value in given.items():
            f = known.get(key)
            if f is None:
                issues.append(ConfigIssue(key, "unknown setting"))
            elif msg := f.metadata["check"](value):
                issues.append(ConfigIssue(key, msg))
        if issues:
            raise ConfigError(issues, "command line")
        return dataclasses.replace(self, **{k: tuple(v) if isinstance(v, list) else v for k, v in given.items()})

    def beam_params(self) -> BeamParams:
        """The decoder's knobs for one request: the :data:`DECODER_SETTINGS`
        of this config, the decoder's defaults for the rest."""
        return BeamParams(**{name: getattr(self, name) for name in DECODER_SETTINGS})

    def with_params(self, params: BeamParams) -> "Config":
        """A copy whose :data:`DECODER_SETTINGS` are ``params``'s (a benchmark's
        session with the knobs it measures); raises :class:`ConfigError` for
        values a config does not allow."""
        return dataclasses.replace(self, **{name: getattr(params, name) for name in DECODER_SETTINGS})

    def worker_settings(self) -> tuple:
        """The settings a running worker's model was built from: when they
        change, the frontend starts a new worker (reloads the model)."""
        return (self.model, self.code_model, self.beam_width, self.backend, self.server_url, self.server_engine,
                self.server_model, self.server_token_file, self.server_ca_file, self.server_deadline_ms,
                self.server_logprobs, self.server_fallback)

    @property
    def skips_unknown_fields(self) -> bool:
        """Whether fields of unknown kind get nothing (``unknown_fields``)."""
        return _skips(self.unknown_fields, self.backend)

    @property
    def skips_terminals(self) -> bool:
        """Whether fields that say they are terminals get nothing (``ibus_terminals``)."""
        return _skips(self.ibus_terminals, self.backend)

    def is_denied(self, app_id: str) -> bool:
        return bool(app_id) and app_id.strip().lower() in self.denylist


def _skips(setting: str, backend: str) -> bool:
    return setting == "skip" or (setting == "auto" and backend == "server")


def _field_errors(cfg: Config) -> list[tuple[dataclasses.Field, str]]:
    out = []
    for f in dataclasses.fields(cfg):
        msg = f.metadata["check"](getattr(cfg, f.name))
        if msg:
            out.append((f, msg))
    return out


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class ConfigIssue:
    key: str
    message: str
    line: Optional[int] = None


class ConfigError(Exception):
    """The configuration is invalid; ``str()`` lists every problem, one per line."""

    def __init__(self, issues: list[ConfigIssue], path: Optional[Union[str, pathlib.Path]] = None) -> None:
        self.issues = list(issues)
        self.path = str(path) if path is not None else None
        super().__init__(self._render())

    def _render(self) -> str:
        lines = []
        for i in self.issues:
            where = self.path or "config"
            if i.line is not None:
                where += f":{i.line}"
            lines.append(f"{where}: {i.key + ': ' if i.key else ''}{i.message}")
        return "\n".join(lines)

    @property
    def first_line(self) -> str:
        """One line for the tray."""
        n = len(self.issues)
        head = self._render().splitlines()[0] if self.issues else "invalid configuration"
        return head + (f" (and {n - 1} more)" if n > 1 else "")


def _line_of(text: str, key: str) -> Optional[int]:
    """1-based line where ``key`` is assigned at the top level of ``text``."""
    pat = re.compile(r'^\s*(?:"' + re.escape(key) + r'"|\'' + re.escape(key) + r"'|" + re.escape(key) + r")\s*[=.]")
    table = re.compile(r"^\s*\[+\s*(?:\"|')?" + re.escape(key) + r"(?:\"|')?\s*[\].]")
    for n, line in enumerate(text.splitlines(), 1):
        if pat.match(line) or table.match(line):
            return n
    return None


def _closest(key: str, known: Iterable[str]) -> Optional[str]:
    import difflib

    m = difflib.get_close_matches(key, list(known), n=1, cutoff=0.7)
    return m[0] if m else None


# --------------------------------------------------------------------------- files


def parse_config(text: str, path: Optional[Union[str, pathlib.Path]] = None) -> Config:
    """Parse and validate TOML text."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column \d+\)", str(e))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        line = int(m.group(1)) if m else None
        raise ConfigError([ConfigIssue("", f"TOML syntax error: {msg}", line)], path) from None
    return Config.from_mapping(data, path, text)


def load_config(path: Optional[Union[str, pathlib.Path]] = None) -> Config:
    """Load ``path`` (default: :func:`default_config_path`).  A missing file
    means all defaults; an unreadable or invalid one raises :class:`ConfigError`."""
    p = pathlib.Path(path) if path is not None else default_config_path()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError([ConfigIssue("", f"cannot read the file: {e}")], p) from None
    return parse_config(text, p)


def default_config_path() -> pathlib.Path:
    """``<user config dir>/ghosttype/config.toml`` (platformdirs)."""
    import platformdirs

    return pathlib.Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / CONFIG_FILENAME


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[\n" + "".join(f"#     {_toml_value(x)},\n" for x in v) + "# ]"
    raise TypeError(type(v))


def default_template() -> str:
    """The commented defaults written on first run: every option, its
    description and its default, commented out (uncomment to change)."""
    out = [
        "# ghosttype configuration (TOML).  Every setting below shows its default;",
        "# remove the leading '# ' from a setting to change it.  Saved changes apply",
        "# while ghosttype runs; an invalid file keeps the previous settings.",
        "",
    ]
    for f in dataclasses.fields(Config):
        out.append(f"# {f.metadata['doc']}")
        out.append(f"# {f.name} = {_toml_value(f.default)}")
        out.append("")
    return "\n".join(out)


def ensure_config_file(path: Optional[Union[str, pathlib.Path]] = None) -> tuple[pathlib.Path, bool]:
    """Write the commented defaults to ``path`` unless it exists; returns the
    path and whether it was created."""
    p = pathlib.Path(path) if path is not None else default_config_path()
    if p.exists():
        return p, False
    replace_text(p, default_template())  # yours alone (0600); through a link that leads nowhere yet
    return p, True
