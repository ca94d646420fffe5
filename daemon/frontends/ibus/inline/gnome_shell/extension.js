// ghosttype's inline suggestion for GNOME Shell 45-51 (ES modules).
//
// GNOME Shell is the IBus panel: it receives the focused field's caret rectangle
// (set-cursor-location, kept in the candidate popup's _dummyCursor) and draws
// IBus's popup, a dark box under the caret.  This extension lets the ghosttype
// engine draw its suggestion instead as grey text starting at the caret, on the
// caret's line, with no box.  It owns a name on the session bus; the engine
// sees the name (a handshake: the name's owner must also own org.gnome.Shell,
// and its process must be GNOME Shell), registers (Register) and then calls
// Show / Hide on it instead of sending IBus's auxiliary text.  Without this
// extension (disabled, removed, another desktop) the engine shows IBus's popup
// as before.
//
// Only the engine is served.  Register(), from a caller whose process is
// ghosttype's engine as IBus starts it (isEngine: its parent runs ibus-daemon,
// an executable only root can change, and its command ends with the arguments
// ibus-daemon gives it), makes that caller's unique name the only one served
// until it leaves the bus; every other caller of Register, Show, Hide and
// Offset gets AccessDenied and changes nothing.  Hidden goes to that engine
// alone.
//
// Show(text) answers whether the text is on screen and how many of its
// characters are visible in full: nothing is drawn outside the focused window
// (the text is cut with an ellipsis at its edge, and nothing is drawn when less
// than MIN_ROOM_PX remain or the caret is not inside the window), nor while the
// screen is locked.  A text of more than MAX_TEXT_CHARS characters is refused
// (InvalidArgs) without being measured.  Whenever text leaves the screen (the
// focus or the caret moved, no room left, the screen locked, Hide, a refused
// Show), the Hidden signal says so; it carries no text.  Whenever the text on
// screen is placed again without a Show (the caret moved, an Offset) and a
// different number of its characters is visible in full, the Visible signal
// says how many: what Tab inserts is what the screen shows.  Both go to the
// engine alone.  The text is never logged or stored.
//
// App(ids) tells the registered engine alone which application has the keys
// (IBus names every Wayland client "gnome-shell"), so that its denylist and
// "Off in <application>" work here too: the focused window's app id and its
// program's file name, sent once the engine registered and at each change of
// the focused window, of the overview and of the session mode; none while
// GNOME Shell's own field has the keys.  Never a title.
//
// Offset(known, x, y, dx, advance) comes before each Show: applications mean different
// things by their caret rectangle (a thin caret; Qt's line edit a 10 px box
// centred on it; a terminal's block cursor) and some report it one change late
// (Firefox, GTK 3).  The engine, which counts what was typed and learns the
// application's character width from its rectangles, knows where the next
// character goes: dx pixels right of the rectangle's left edge, while GNOME
// Shell's caret is the rectangle at (x, y) the engine measured from.  Any other
// caret (or known false) is taken as before: after a thin caret, into a block.
// advance > 0: the field's characters are all that wide (a fixed-width font),
// so the text is drawn in the monospace font, spaced to that width.
//
// SurfaceCaret(pid, x, y, w, h): where GNOME Shell was told no caret for the
// field (Thunderbird's compose window commits no surface after its cursor
// rectangles, so Mutter passes none on), the engine reads the caret from the
// accessibility bus, relative to the application's surface, in its device pixels
// (Gecko's: the logical ones times the monitor's scale); it is placed where the
// focused window's buffer is (its client-side shadow included), brought to the
// stage's pixels, and only while that window is process pid's. One
// of no height (the engine stopped reading) changes nothing here: GNOME Shell's
// next caret replaces it.

import Clutter from 'gi://Clutter';
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Mtk from 'gi://Mtk';
import Pango from 'gi://Pango';
import St from 'gi://St';

import * as IBusManager from 'resource:///org/gnome/shell/misc/ibusManager.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import {Extension, InjectionManager} from 'resource:///org/gnome/shell/extensions/extension.js';

// The protocol, as protocol.xml (installed beside this file; the one place it is written) defines
// it: the interface served, its version, the bound on Show's text and the placement KWin's effect shares.
const INTERFACE = new TextDecoder().decode(Gio.File.new_for_uri(import.meta.url).get_parent()
    .get_child('protocol.xml').load_contents(null)[1]);

function constant(name) {
    const found = INTERFACE.match(new RegExp(`<annotation name="org\\.freedesktop\\.IBus\\.GhostType\\.${name}" value="([^"]*)"`));
    if (!found)
        throw new Error(`protocol.xml names no ${name}`);
    return found[1];
}

const BUS_NAME = INTERFACE.match(/<interface name="([^"]+)"/)[1];
const OBJECT_PATH = constant('ObjectPath');
const VERSION = Number(constant('Version'));
// The longest text Show accepts, in characters.
const MAX_TEXT_CHARS = Number(constant('MaxTextChars'));
// How ibus-daemon starts ghosttype's engine from its component file: the command ends with these
// (component.py's engine_command).
const ENGINE_ARGS = ['ibus', 'run', '--ibus'];
const ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied';
const INVALID_ARGS = 'org.freedesktop.DBus.Error.InvalidArgs';

// A grey that reads as a suggestion on light and dark fields; less room than MIN_ROOM_PX right of the caret
// (logical pixels): nothing is drawn; EDGE_PX kept free at the window's right edge; text height as a share
// of the caret's height (a caret spans the line).
const GREY = constant('Grey');
const MIN_ROOM_PX = Number(constant('MinRoomPx'));
const EDGE_PX = Number(constant('EdgePx'));
const TEXT_OF_CARET = Number(constant('TextOfCaret'));

// The screen is locked, or its shield is coming up: nothing is drawn (metadata.json keeps the
// extension, and so its bus name, across the lock screen; its label would stand above the shield).
function screenLocked() {
    return Boolean(Main.sessionMode.isLocked || Main.sessionMode.currentMode === 'unlock-dialog' ||
        Main.screenShield?.locked || Main.screenShield?.active);
}

// The focused window's application for App: [its app id (the sandbox's, else the Wayland app_id or X11
// WM_CLASS class), its program's file name], lower case; [] while the keys go to GNOME Shell itself.
function focusedApp() {
    const win = global.display.focus_window;
    if (!win || Main.overview.visible || Main.modalCount > 0 || screenLocked())
        return [];
    const id = (win.get_sandboxed_app_id() || win.get_wm_class() || '').toLowerCase();
    let program = '';
    try {
        if (win.get_pid() > 0)
            program = GLib.path_get_basename(GLib.file_read_link(`/proc/${win.get_pid()}/exe`)).toLowerCase();
    } catch {
        program = ''; // gone, or not this user's
    }
    return [id, program.replace(/ \(deleted\)$/, '')];
}

function readProc(path) {
    const [, bytes] = GLib.file_get_contents(path);
    return new TextDecoder().decode(bytes);
}

// Only root can change the file or directory at path: owned by root, writable by no one else.
function rootOnly(path) {
    const info = Gio.File.new_for_path(path).query_info('unix::uid,unix::mode',
        Gio.FileQueryInfoFlags.NOFOLLOW_SYMLINKS, null);
    return info.get_attribute_uint32('unix::uid') === 0 &&
        (info.get_attribute_uint32('unix::mode') & 0o022) === 0;
}

// Whether process pid is ghosttype's engine as IBus starts it: its command ends with ENGINE_ARGS and
// its parent runs ibus-daemon, from a file in a directory only root can change.
function isEngine(pid) {
    try {
        const args = readProc(`/proc/${pid}/cmdline`).split('\0');
        if (args.length > 0 && args[args.length - 1] === '')
            args.pop();
        const tail = args.slice(-ENGINE_ARGS.length);
        if (tail.length !== ENGINE_ARGS.length || tail.some((arg, i) => arg !== ENGINE_ARGS[i]))
            return false;
        const stat = readProc(`/proc/${pid}/stat`);
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (!Number.isInteger(ppid) || ppid <= 1)
            return false;
        const exe = GLib.file_read_link(`/proc/${ppid}/exe`);
        return GLib.path_get_basename(exe) === 'ibus-daemon' && rootOnly(exe) &&
            rootOnly(GLib.path_get_dirname(exe));
    } catch {
        return false;
    }
}

class InlineGhost {
    constructor(onHidden, onVisible) {
        this._onHidden = onHidden;
        this._onVisible = onVisible;
        this._text = '';
        this._chars = 0; // the characters of this._text visible in full, as last answered or signalled
        const popup = IBusManager.getIBusManager()._candidatePopup;
        const cursor = popup._dummyCursor;
        // the caret in stage coordinates, as GNOME Shell places its popup (updated below); null: not
        // reported since the focused window changed (another window's caret says nothing about this one)
        this._caret = null;
        // {x, y, dx, advance}: start dx px right of the caret's left edge while it is the rectangle at (x, y);
        // advance > 0: each character that wide, in the monospace font (see Offset)
        this._offset = null;
        // {advance, own, unit}: a fixed-width field's characters are drawn `advance` apart, the monospace font's
        // being `own` wide, with letter spacing of `unit` stage pixels per Pango unit (see _setText); null: plain
        this._spacing = null;
        this._label = new St.Label({reactive: false, visible: false});
        // cut by _place (the characters that fit in full, then an ellipsis), never by Pango: what is drawn is the
        // count Show answers with, as in KWin's effect
        this._label.clutter_text.ellipsize = Pango.EllipsizeMode.NONE;
        this._measure = new St.Label({reactive: false, opacity: 0});
        // beside the popup's caret actor: the input-method group (51), the UI group before; both at the stage's origin
        cursor.get_parent().add_child(this._measure);
        cursor.get_parent().add_child(this._label);
        const ghost = this;
        this._injections = new InjectionManager();
        this._injections.overrideMethod(popup, '_setDummyCursorGeometry', original => function (x, y, w, h) {
            original.call(this, x, y, w, h);
            ghost._follow({x: Math.round(x), y: Math.round(y), width: Math.round(w), height: Math.round(h)});
        });
        this._focusId = global.display.connect('notify::focus-window', () => {
            this._caret = null;
            this._followWindow(global.display.focus_window);
            this._lost();
        });
        this._window = null; // the focused window, whose moves and resizes take the text away
        this._windowIds = [];
        this._followWindow(global.display.focus_window);
        this._ibusFocusId = IBusManager.getIBusManager().connect('focus-out', () => this._lost());
        this._modeId = Main.sessionMode.connect('updated', () => this._lockChanged());
        this._shieldIds = Main.screenShield
            ? ['active-changed', 'locked-changed'].map(s => Main.screenShield.connect(s, () => this._lockChanged()))
            : [];
    }

    // The focused window moved or changed size (the application resized itself, the user dragged it): the caret
    // GNOME Shell has for it is where it was, and the text would stand there, over anything, outside the window;
    // it goes (the engine hears Hidden) until the application reports its caret again.
    _followWindow(win) {
        for (const id of this._windowIds) {
            try {
                this._window.disconnect(id);
            } catch {
                // the window is gone, and its handlers with it
            }
        }
        this._window = win;
        this._windowIds = win ? ['size-changed', 'position-changed'].map(s => win.connect(s, () => {
            this._caret = null;
            this._lost();
        })) : [];
    }

    // Locking takes the text off the screen (the engine hears Hidden); nothing is drawn until unlocked.
    _lockChanged() {
        if (screenLocked())
            this._lost();
    }

    destroy() {
        this._injections.clear();
        global.display.disconnect(this._focusId);
        this._followWindow(null);
        IBusManager.getIBusManager().disconnect(this._ibusFocusId);
        Main.sessionMode.disconnect(this._modeId);
        for (const id of this._shieldIds)
            Main.screenShield.disconnect(id);
        this._label.destroy();
        this._measure.destroy();
        this._text = '';
    }

    show(text) {
        this._text = text;
        const chars = this._place();
        this._chars = chars;
        if (chars === 0)
            this.hide();
        return chars;
    }

    offset(known, x, y, dx, advance) {
        this._offset = known ? {x, y, dx, advance: Number.isFinite(advance) && advance > 0 ? advance : 0} : null;
        this._placeAgain();
    }

    // The text shown is placed again (the caret moved, an Offset): it goes when it no longer fits; the engine
    // hears when another number of its characters is visible in full (the edge cuts it elsewhere).
    _placeAgain() {
        if (!this._text)
            return;
        const chars = this._place();
        if (chars === 0) {
            this.hide();
        } else if (chars !== this._chars) {
            this._chars = chars;
            this._onVisible(chars);
        }
    }

    // Takes the text off the screen; the engine hears Hidden when some was there, whoever asked.
    hide() {
        const shown = this._label.visible;
        this._text = '';
        this._chars = 0;
        this._spacing = null;
        this._setText('');
        this._label.hide();
        if (shown)
            this._onHidden();
    }

    // Draws this._text at the caret; the number of characters visible in full (0: nothing drawn).
    _place() {
        const win = global.display.focus_window;
        if (!this._text || !win || !this._caret || screenLocked())
            return 0;
        const caret = this._caret;
        const frame = win.get_frame_rect();
        // where the engine says the next character goes (Offset), else at the caret's left edge (where the
        // next character's ink starts after a thin caret, and a terminal's block cursor is its cell)
        const off = this._offset;
        const x = off && Math.abs(off.x - caret.x) <= 1 && Math.abs(off.y - caret.y) <= 1
            ? caret.x + off.dx : caret.x;
        const y = caret.y;
        const h = caret.height;
        const right = frame.x + frame.width - EDGE_PX;
        if (h <= 0 || x < frame.x || x > right || y < frame.y || y + h > frame.y + frame.height)
            return 0;
        const room = right - x;
        if (room < MIN_ROOM_PX)
            return 0;
        const scale = St.ThemeContext.get_for_stage(global.stage).scale_factor;
        let style = `font-size: ${Math.max(6, Math.round(h * TEXT_OF_CARET / scale))}px; color: ${GREY};`;
        // the engine measured the advance in the caret's units: a caret read from the accessibility bus, its
        // device pixels (surfaceCaret)
        const measured = off ? off.advance * (caret.unit || 1) : 0;
        const advance = measured < 4 * h ? measured : 0;
        this._spacing = null;
        if (advance > 0) { // the field's fixed-width font: the monospace one, each character as wide as the field's
            const natural = this._advance(style);
            // as large as the field's (its advance over the size's), within the line; spaced for what is left
            const size = Math.max(6, Math.min(h / scale, Math.round(h * TEXT_OF_CARET / scale) * advance / natural));
            style = `font-size: ${size.toFixed(2)}px; font-family: monospace; color: ${GREY};`;
            const own = this._advance(style);
            const unit = this._spacingUnit(style);
            if (unit > 0)
                this._spacing = {advance, own, unit};
            else
                style += ` letter-spacing: ${((advance - own) / scale).toFixed(3)}px;`;
        }
        this._label.set_style(style);
        this._measure.set_style(style);
        this._setText(this._text);
        this._label.set_width(-1);
        const [, natural] = this._label.get_preferred_width(-1);
        let chars = [...this._text].length;
        if (natural > room) {
            chars = this._fitting(room);
            if (chars === 0)
                return 0;
            this._setText(`${[...this._text].slice(0, chars).join('')}\u2026`);
        }
        const [, height] = this._label.get_preferred_height(-1);
        this._label.set_position(x, Math.round(y + (h - height) / 2));
        this._label.get_parent().set_child_above_sibling(this._label, null);
        this._label.show();
        return chars;
    }

    // The label's text. In a fixed-width field (this._spacing, from _place) each character is spaced to stand
    // where the field's own would, round(i * advance) from the first: GNOME Shell draws the monospace font's
    // characters whole pixels wide and a letter-spacing under a pixel did not show (the field's 8.81 px drawn
    // 9 px apart: 4 px off after 22 characters), so each character gets the whole pixels it needs.
    _setText(text) {
        const clutterText = this._label.clutter_text;
        const sp = this._spacing;
        if (!sp) {
            clutterText.use_markup = false;
            this._label.text = text;
            return;
        }
        const spans = [...text].map((ch, i) => {
            const gap = Math.round((i + 1) * sp.advance) - Math.round(i * sp.advance) - sp.own;
            const units = Math.round(gap / sp.unit);
            const escaped = GLib.markup_escape_text(ch, -1);
            return units ? `<span letter_spacing="${units}">${escaped}</span>` : escaped;
        });
        clutterText.set_markup(spans.join(''));
    }

    // Stage pixels per Pango unit of letter spacing at ``style``, measured (0: spacing not applied).
    _spacingUnit(style) {
        this._measure.set_style(style);
        const clutterText = this._measure.clutter_text;
        clutterText.set_markup('MMMMMMMMMM');
        const plain = this._measure.get_preferred_width(-1)[1];
        clutterText.set_markup(`<span letter_spacing="${4 * Pango.SCALE}">MMMMMMMMMM</span>`);
        const spaced = this._measure.get_preferred_width(-1)[1];
        clutterText.use_markup = false;
        this._measure.text = '';
        return (spaced - plain) / (10 * 4 * Pango.SCALE);
    }

    // One character's advance in the monospace font at the size ``style`` gives (stage pixels).
    _advance(style) {
        this._measure.set_style(`${style} font-family: monospace;`);
        this._measure.text = 'M'.repeat(10);
        const width = this._measure.get_preferred_width(-1)[1] / 10;
        this._measure.text = '';
        return width;
    }

    // How many leading characters fit in full before an ellipsis within ``room`` pixels.
    _fitting(room) {
        const chars = [...this._text];
        this._measure.text = '\u2026';
        const limit = room - this._measure.get_preferred_width(-1)[1];
        let lo = 0, hi = chars.length;
        while (lo < hi) {
            const mid = Math.ceil((lo + hi) / 2);
            this._measure.text = chars.slice(0, mid).join('');
            if (this._measure.get_preferred_width(-1)[1] <= limit)
                lo = mid;
            else
                hi = mid - 1;
        }
        this._measure.text = '';
        return lo;
    }

    // The caret the engine read from the accessibility bus, relative to the surface of process pid's window:
    // followed while that window has the focus (see SurfaceCaret above).
    surfaceCaret(pid, x, y, w, h) {
        const win = global.display.focus_window;
        if (!win || win.get_pid() !== pid || h <= 0 || screenLocked())
            return;
        // Gecko's extents count its device pixels, the logical ones times its monitor's scale (the desktop
        // tier's Thunderbird at scale 2 had its suggestion at twice the caret's distance from the window's
        // corner, twice as large): stage pixels per device pixel, 1 where the stage counts the monitor's pixels
        const logical = 1000;
        const unit = win.protocol_to_stage_rect(new Mtk.Rectangle({x: 0, y: 0, width: logical, height: logical}))
            .width / logical / Math.max(1, global.display.get_monitor_scale(win.get_monitor()));
        const buffer = win.get_buffer_rect();
        this._follow({x: buffer.x + Math.round(x * unit), y: buffer.y + Math.round(y * unit),
            width: Math.round(w * unit), height: Math.max(1, Math.round(h * unit)), unit});
    }

    // The caret moved (the application redrew after a key): follow it, or hide when it no longer fits.
    _follow(caret) {
        this._caret = caret;
        this._placeAgain();
    }

    _lost() {
        this.hide();
    }
}

export default class GhostTypeExtension extends Extension {
    enable() {
        this._engine = null; // the unique name of the engine that registered: the only caller served
        this._engineWatch = 0;
        this._ghost = new InlineGhost(() => this._hidden(), chars => this._visible(chars));
        this._dbus = Gio.DBusExportedObject.wrapJSObject(INTERFACE, this);
        this._dbus.export(Gio.DBus.session, OBJECT_PATH);
        this._nameId = Gio.bus_own_name_on_connection(Gio.DBus.session, BUS_NAME,
            Gio.BusNameOwnerFlags.NONE, null, null);
        this._appIds = [[global.display, global.display.connect('notify::focus-window', () => this._app())],
            ...['showing', 'hidden'].map(s => [Main.overview, Main.overview.connect(s, () => this._app())]),
            [Main.sessionMode, Main.sessionMode.connect('updated', () => this._app())]];
    }

    disable() {
        for (const [object, id] of this._appIds)
            object.disconnect(id);
        Gio.bus_unown_name(this._nameId);
        this._dbus.unexport();
        this._dbus = null;
        this._forget();
        this._ghost.destroy();
        this._ghost = null;
    }

    // The text left the screen: the registered engine alone hears it (it carries no text).
    _hidden() {
        if (this._engine === null)
            return;
        try {
            Gio.DBus.session.emit_signal(this._engine, OBJECT_PATH, BUS_NAME, 'Hidden', null);
        } catch (e) {
            console.debug(`ghosttype: Hidden not sent: ${e.message}`);
        }
    }

    // Another number of the shown text's characters is visible in full: the registered engine alone hears it.
    _visible(chars) {
        if (this._engine === null)
            return;
        try {
            Gio.DBus.session.emit_signal(this._engine, OBJECT_PATH, BUS_NAME, 'Visible',
                new GLib.Variant('(u)', [chars]));
        } catch (e) {
            console.debug(`ghosttype: Visible not sent: ${e.message}`);
        }
    }

    // The application that has the keys: the registered engine alone hears it (ids only, never a title).
    _app() {
        if (this._engine === null)
            return;
        try {
            Gio.DBus.session.emit_signal(this._engine, OBJECT_PATH, BUS_NAME, 'App',
                new GLib.Variant('(as)', [focusedApp()]));
        } catch (e) {
            console.debug(`ghosttype: App not sent: ${e.message}`);
        }
    }

    _forget() {
        if (this._engineWatch)
            Gio.bus_unwatch_name(this._engineWatch);
        this._engineWatch = 0;
        this._engine = null;
    }

    // Only the engine that registered is served; anyone else gets AccessDenied and changes nothing.
    _fromEngine(invocation) {
        if (this._ghost !== null && this._engine !== null && invocation.get_sender() === this._engine)
            return true;
        invocation.return_dbus_error(ACCESS_DENIED, 'only the ghosttype engine that registered may call this');
        return false;
    }

    // D-Bus methods (the engine's calls), each with its invocation: the caller is known from it.
    // No method without "Async" may be added for these: GJS prefers it and it would skip the check.
    RegisterAsync(_params, invocation) {
        const caller = invocation.get_sender();
        if (this._engine !== null) {
            if (caller === this._engine)
                invocation.return_value(new GLib.Variant('()', []));
            else
                invocation.return_dbus_error(ACCESS_DENIED, 'another engine is registered');
            return;
        }
        invocation.get_connection().call('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus',
            'GetConnectionUnixProcessID', new GLib.Variant('(s)', [caller]), new GLib.VariantType('(u)'),
            Gio.DBusCallFlags.NONE, -1, null, (connection, result) => {
                let pid = 0;
                try {
                    [pid] = connection.call_finish(result).deepUnpack();
                } catch {
                    pid = 0;
                }
                if (this._ghost !== null && this._engine === null && pid > 0 && isEngine(pid)) {
                    this._engine = caller;
                    // until it leaves the bus (called at once if it already has)
                    this._engineWatch = Gio.bus_watch_name_on_connection(Gio.DBus.session, caller,
                        Gio.BusNameWatcherFlags.NONE, null, () => {
                            if (this._engine !== caller)
                                return;
                            this._forget();
                            this._ghost?.hide(); // nobody is left to accept what is shown
                        });
                }
                if (this._engine === caller) {
                    invocation.return_value(new GLib.Variant('()', []));
                    this._app(); // after the answer, which the engine must have first to take it
                } else
                    invocation.return_dbus_error(ACCESS_DENIED, 'not the ghosttype engine IBus started');
            });
    }

    ShowAsync([text], invocation) {
        if (!this._fromEngine(invocation))
            return;
        // refused unmeasured: a UTF-16 length over twice the bound has more characters than it
        if (text.length > 2 * MAX_TEXT_CHARS || [...text].length > MAX_TEXT_CHARS) {
            this._ghost.hide();
            invocation.return_dbus_error(INVALID_ARGS, `more than ${MAX_TEXT_CHARS} characters`);
            return;
        }
        const chars = this._ghost.show(text);
        invocation.return_value(new GLib.Variant('(bu)', [chars > 0, chars]));
    }

    OffsetAsync([known, x, y, dx, advance], invocation) {
        if (!this._fromEngine(invocation))
            return;
        this._ghost.offset(known, x, y, dx, advance);
        invocation.return_value(new GLib.Variant('()', []));
    }

    // KWin's effect sends the engine the caret (Caret) from now on; GNOME Shell gives IBus the caret itself,
    // so this extension sends none.
    WatchAsync(_params, invocation) {
        if (!this._fromEngine(invocation))
            return;
        invocation.return_value(new GLib.Variant('()', []));
    }

    SurfaceCaretAsync([pid, x, y, w, h], invocation) {
        if (!this._fromEngine(invocation))
            return;
        this._ghost.surfaceCaret(pid, x, y, w, h);
        invocation.return_value(new GLib.Variant('()', []));
    }

    HideAsync(_params, invocation) {
        if (!this._fromEngine(invocation))
            return;
        this._ghost.hide();
        invocation.return_value(new GLib.Variant('()', []));
    }

    get Version() {
        return VERSION;
    }
}
