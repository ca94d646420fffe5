"""The checks behind ``ghosttype doctor``: one result per check, each with a
fix hint.  Every check is independent and never raises."""

from __future__ import annotations

import os
import time
from typing import Callable, Mapping, Optional

from daemon.checks import CheckResult


def check_display(env: Mapping[str, str]) -> CheckResult:
    from daemon.frontends.session import DisplayServer, detect_session

    session = detect_session(env)
    if session.server is DisplayServer.X11:
        return CheckResult("display server", True, session.describe())
    if session.server is DisplayServer.XWAYLAND:
        return CheckResult("display server", None, session.describe(),
                           "`ghosttype run` reaches X11 (XWayland) applications only; for native Wayland "
                           "apps use the IBus engine: ghosttype ibus install")
    if session.server is DisplayServer.WAYLAND:
        return CheckResult("display server", False, session.describe(),
                           "use the IBus engine: ghosttype ibus install (or log in to an X11 session)")
    if session.server is DisplayServer.NONE:
        return CheckResult("display server", False, session.describe(),
                           "run ghosttype inside your desktop session (DISPLAY must be set)")
    return CheckResult("display server", True, session.describe())  # macOS, Windows


def check_platform(env: Mapping[str, str]) -> CheckResult:
    """Opens the real backend: focus, text injection, the accept-key suppressor."""
    from daemon.frontends.overlay.platform import select_platform
    from daemon.frontends.base import PlatformError

    try:
        platform = select_platform(env, use_atspi=False)
    except PlatformError as e:
        return CheckResult("input capture and injection", False, "unavailable", str(e))
    try:
        focus = platform.focus.current()
        return CheckResult("input capture and injection", True,
                           f"{platform.name}: {'XTEST available, ' if platform.name == 'x11' else ''}"
                           f"focused app {focus.app_id or '(unknown)'}")
    finally:
        platform.close()


def check_keyboard_listener() -> CheckResult:
    from daemon.frontends.overlay.keyboard import KeyboardSource

    source = KeyboardSource(lambda _event: None, mouse=False)
    try:
        source.start()
        time.sleep(0.2)
        alive = source.is_alive()
    except Exception as e:  # pynput raises ImportError without a display
        return CheckResult("keyboard listener", False, f"cannot start: {e}",
                           "ghosttype needs an X11 display with the RECORD extension")
    finally:
        try:
            source.stop()
        except Exception:
            pass
    return CheckResult("keyboard listener", alive, "running" if alive else "stopped right after start",
                       "check that the X server has the RECORD extension (xdpyinfo | grep RECORD)")


def check_atspi() -> CheckResult:
    try:
        from daemon.frontends.overlay.platform.atspi.reader import AtspiFocus
    except ImportError as e:
        return CheckResult("accessibility (AT-SPI)", None, f"unavailable: {e}", "pip install jeepney")
    try:
        focus = AtspiFocus(track_events=False)
    except Exception as e:
        return CheckResult("accessibility (AT-SPI)", None, f"unavailable: {e}",
                           "install at-spi2-core; without it ghosttype cannot detect password fields by role "
                           "and places the ghost text near the pointer")
    try:
        answer = focus.query()
    finally:
        focus.close()
    where = "a focused accessible field" if answer is not None else "no accessible field focused right now"
    return CheckResult("accessibility (AT-SPI)", True, f"bus reachable; {where}")


def check_tray(env: Mapping[str, str]) -> CheckResult:
    """A tray host owns the _NET_SYSTEM_TRAY_S<screen> selection (what Qt checks)."""
    if not env.get("DISPLAY"):
        return CheckResult("tray host", None, "no X display")
    try:
        from daemon.frontends.overlay.platform.x11.common import open_display

        display = open_display(env.get("DISPLAY"))
        try:
            atom = display.intern_atom(f"_NET_SYSTEM_TRAY_S{display.get_default_screen()}")
            owner = display.get_selection_owner(atom)
            present = bool(owner) and getattr(owner, "id", owner) != 0
        finally:
            display.close()
    except Exception as e:
        return CheckResult("tray host", None, f"cannot check: {e}")
    if present:
        return CheckResult("tray host", True, "a system tray is running")
    return CheckResult("tray host", None, "no system tray: ghosttype runs without its tray icon",
                       "use a panel with a system tray (or the config file to turn ghosttype on and off)")


def check_model(model: str, label: str = "model") -> CheckResult:
    """``label``: "model", or "code model" for ``code_model`` (without it the
    main model suggests everywhere)."""
    from daemon.backends.llamacpp.models import ModelLoadError, resolve_model

    try:
        path = resolve_model(model)
    except ModelLoadError as e:
        return CheckResult(label, False, str(e))
    try:
        from daemon.backends.llamacpp.open import open_model

        start = time.perf_counter()
        lm = open_model(str(path), n_ctx=512, n_seq_max=2)
        lm.logprobs([lm.tokenize("Hello")])
        elapsed = time.perf_counter() - start
        close = getattr(lm, "close", None)
        if close:
            close()
    except Exception as e:
        return CheckResult(label, False, f"{path.name}: {e}", "reinstall the model package or choose another model")
    size_mb = path.stat().st_size / 1e6
    return CheckResult(label, True, f"{model}: {path} ({size_mb:.0f} MB), loaded and ran in {elapsed:.2f} s")


def check_suggestion_source(cfg: object) -> CheckResult:
    """Where suggestions come from: this machine, or the configured server
    (which then receives the text before the caret)."""
    if getattr(cfg, "backend", "local") != "server":
        return CheckResult("suggestions from", True, "the local model, in this process: typed text stays here")
    from daemon.backends.served.client import Server, ServerError, read_token

    url = getattr(cfg, "server_url")
    fallback = "the local model" if getattr(cfg, "server_fallback") == "local" else "nothing"
    where = f"the server {url} (typed text is sent there; while it does not answer: {fallback})"
    try:
        token_file = getattr(cfg, "server_token_file")
        server = Server(url, read_token(token_file) if token_file else None, getattr(cfg, "server_ca_file"),
                        allow_insecure_http=getattr(cfg, "allow_insecure_http", False))
    except (ServerError, ValueError, OSError) as e:
        return CheckResult("suggestions from", False, f"{where}: {e}")
    try:
        problem = server.probe()
    finally:
        server.close()
    if problem is not None:
        return CheckResult("suggestions from", False, f"{where}: {problem}",
                           "start the server, or check server_url, server_token_file and server_ca_file")
    return CheckResult("suggestions from", True, f"{where}: it answers")


def check_config(path) -> tuple[CheckResult, Optional[object]]:
    from daemon.config import ConfigError, load_config

    if not path.exists():
        return CheckResult("config", True, f"{path} not created yet: the defaults apply"), None
    try:
        cfg = load_config(path)
    except ConfigError as e:
        return CheckResult("config", False, str(e).splitlines()[0], f"edit {path} (ghosttype config --check)"), None
    except OSError as e:
        return CheckResult("config", False, f"{path}: {e}"), None
    return CheckResult("config", True, f"{path} is valid"), cfg


def run_checks(config_path, env: Optional[Mapping[str, str]] = None,
               report: Callable[[CheckResult], None] = lambda r: None) -> list[CheckResult]:
    env = os.environ if env is None else env
    results: list[CheckResult] = []

    def add(result: CheckResult) -> None:
        results.append(result)
        report(result)

    config_result, cfg = check_config(config_path)
    add(config_result)
    add(check_display(env))
    from daemon.frontends.session import DisplayServer, detect_session

    native = detect_session(env).server in (DisplayServer.MACOS, DisplayServer.WINDOWS)
    if env.get("DISPLAY") or native:
        add(check_platform(env))
        add(check_keyboard_listener())
    if env.get("DISPLAY") and not native:
        add(check_tray(env))
    if not native:  # AT-SPI is Linux's accessibility bus
        add(check_atspi())
        from daemon.frontends.ibus.component import ibus_checks

        for result in ibus_checks(env):
            add(result)
    add(check_suggestion_source(cfg))
    if getattr(cfg, "backend", "local") != "server" or getattr(cfg, "server_fallback", "") == "local":
        model = getattr(cfg, "model", "smollm2")
        add(check_model(model))
        code_model = getattr(cfg, "code_model", "")
        if code_model and code_model != model:
            add(check_model(code_model, "code model"))
    return results
