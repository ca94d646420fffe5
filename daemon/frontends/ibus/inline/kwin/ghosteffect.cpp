// ghosttype's inline suggestion for KDE Plasma 6 (see ghosteffect.h).
#include "ghosteffect.h"

#include "core/rendertarget.h"
#include "core/renderviewport.h"
#include "effect/effecthandler.h"
#include "effect/effectwindow.h"
#include "inputmethod.h"
#include "main.h"
#include "opengl/glutils.h"
#include "wayland/seat.h"
#include "wayland/surface.h"
#include "wayland/textinput_v3.h"
#include "wayland_server.h"

#include <QDBusConnection>
#include <QDBusError>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QDBusServiceWatcher>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QPainter>

#include <cmath>

#include <sys/stat.h>

namespace KWin
{

// The protocol's names, version and bound: protocol.xml, read by CMakeLists.txt (what each version added:
// that file).
static const QString s_busName = QStringLiteral(GHOSTTYPE_INTERFACE);
static const QString s_objectPath = QStringLiteral(GHOSTTYPE_ObjectPath);
static constexpr uint s_version = GHOSTTYPE_Version;
// The longest text Show accepts, in characters.
static constexpr qsizetype s_maxChars = GHOSTTYPE_MaxTextChars;
// Read by `ghosttype doctor` from the installed file: the KWin release this was built for.
[[gnu::used]] static const char s_builtFor[] = "ghosttype-kwin-effect built for KWin " GHOSTTYPE_KWIN_VERSION;
// The placement the GNOME extension shares (protocol.xml): the grey that reads as a suggestion on light
// and dark fields; less room than s_minRoom right of the caret (logical pixels): nothing is drawn; s_edge
// kept free at the window's right edge; text height as a share of the caret's height (a caret spans the line).
static const QColor s_grey = QColor::fromRgb(QRgb(0xff000000u | GHOSTTYPE_Grey));
static constexpr qreal s_minRoom = GHOSTTYPE_MinRoomPx;
static constexpr qreal s_edge = GHOSTTYPE_EdgePx;
static constexpr qreal s_textOfCaret = GHOSTTYPE_TextOfCaret;
// A text-input state not applied after this long: KWin's caret is stale (an application redraws its
// surface within a few frames of its text-input commit; Firefox may not for many keys).
static constexpr qint64 s_staleMs = GHOSTTYPE_StaleCaretMs;
static const QString s_staleError = QStringLiteral(GHOSTTYPE_StaleCaretError);

// Only root can change the file or directory at path: owned by root, writable by no one else.
static bool rootOnly(const QString &path)
{
    struct stat st;
    return ::lstat(QFile::encodeName(path).constData(), &st) == 0 && st.st_uid == 0
        && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

static QByteArray readProc(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Whether process pid is ghosttype's engine as IBus starts it: its command ends with the arguments
// ibus-daemon gives it from its component file (component.py's engine_command: "... ibus run --ibus")
// and its parent runs ibus-daemon, from a file in a directory only root can change.
static bool isEngine(uint pid)
{
    QList<QByteArray> args = readProc(QStringLiteral("/proc/%1/cmdline").arg(pid)).split('\0');
    if (!args.isEmpty() && args.last().isEmpty()) {
        args.removeLast();
    }
    const QList<QByteArray> engineArgs = {QByteArrayLiteral("ibus"), QByteArrayLiteral("run"), QByteArrayLiteral("--ibus")};
    if (args.size() < engineArgs.size() || args.mid(args.size() - engineArgs.size()) != engineArgs) {
        return false;
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses
    const QByteArray procStat = readProc(QStringLiteral("/proc/%1/stat").arg(pid));
    const qsizetype close = procStat.lastIndexOf(')');
    if (close < 0) {
        return false;
    }
    bool ok = false;
    const uint ppid = procStat.mid(close + 2).split(' ').value(1).toUInt(&ok);
    if (!ok || ppid <= 1) {
        return false;
    }
    const QString exe = QFile::symLinkTarget(QStringLiteral("/proc/%1/exe").arg(ppid));
    if (exe.isEmpty()) {
        return false;
    }
    const QFileInfo info(exe);
    return info.fileName() == QLatin1String("ibus-daemon") && rootOnly(exe) && rootOnly(info.absolutePath());
}

GhostService::GhostService(GhostEffect *effect)
    : QObject(effect)
    , m_effect(effect)
    , m_watch(new QDBusServiceWatcher(this))
{
    m_watch->setConnection(QDBusConnection::sessionBus());
    m_watch->setWatchMode(QDBusServiceWatcher::WatchForUnregistration);
    connect(m_watch, &QDBusServiceWatcher::serviceUnregistered, this, &GhostService::forget);
}

uint GhostService::version() const
{
    return s_version;
}

bool GhostService::fromEngine()
{
    if (!m_engine.isEmpty() && message().service() == m_engine) {
        return true;
    }
    sendErrorReply(QDBusError::AccessDenied, QStringLiteral("only the ghosttype engine that registered may call this"));
    return false;
}

void GhostService::Register()
{
    const QString caller = message().service();
    if (caller == m_engine) {
        return; // the engine again: the empty answer
    }
    if (!m_engine.isEmpty() || m_asking.contains(caller)) {
        sendErrorReply(QDBusError::AccessDenied, QStringLiteral("another engine is registered, or this caller is being checked"));
        return;
    }
    // Watched before its process is asked for, so that leaving the bus meanwhile is heard.
    m_asking.insert(caller);
    m_watch->addWatchedService(caller);
    setDelayedReply(true);
    const QDBusMessage request = message();
    QDBusMessage ask = QDBusMessage::createMethodCall(QStringLiteral("org.freedesktop.DBus"), QStringLiteral("/org/freedesktop/DBus"),
                                                      QStringLiteral("org.freedesktop.DBus"), QStringLiteral("GetConnectionUnixProcessID"));
    ask << caller;
    auto *pending = new QDBusPendingCallWatcher(QDBusConnection::sessionBus().asyncCall(ask), this);
    connect(pending, &QDBusPendingCallWatcher::finished, this, [this, request, caller](QDBusPendingCallWatcher *call) {
        call->deleteLater();
        const QDBusPendingReply<uint> pid = *call;
        const bool onBus = m_asking.remove(caller); // false: it left meanwhile
        if (onBus && m_engine.isEmpty() && !pid.isError() && isEngine(pid.value())) {
            m_engine = caller;
        }
        if (m_engine != caller) {
            m_watch->removeWatchedService(caller);
            QDBusConnection::sessionBus().send(
                request.createErrorReply(QDBusError::AccessDenied, QStringLiteral("not the ghosttype engine IBus started")));
            return;
        }
        QDBusConnection::sessionBus().send(request.createReply());
        emitApp(); // after the answer, which the engine must have first to take it
    });
}

bool GhostService::Show(const QString &text, uint &chars)
{
    chars = 0;
    if (!fromEngine()) {
        return false;
    }
    // refused unmeasured: a UTF-16 length over twice the bound has more characters than it
    if (text.size() > 2 * s_maxChars || text.toUcs4().size() > s_maxChars) {
        m_effect->hide();
        sendErrorReply(QDBusError::InvalidArgs, QStringLiteral("more than %1 characters").arg(s_maxChars));
        return false;
    }
    if (m_effect->caretStale()) {
        // KWin's caret is keys behind the application's: drawn there, the text would cover typed text.
        // The engine shows IBus's popup instead.
        m_effect->hide();
        sendErrorReply(s_staleError, QStringLiteral("KWin has not applied the application's caret"));
        chars = 0;
        return false;
    }
    chars = m_effect->show(text);
    return chars > 0;
}

void GhostService::Offset(bool known, int x, int y, int dx, double advance)
{
    if (fromEngine()) {
        m_effect->offset(known, x, y, dx, advance);
    }
}

void GhostService::Hide()
{
    if (fromEngine()) {
        m_effect->hide();
    }
}

void GhostService::Watch()
{
    if (!fromEngine()) {
        return;
    }
    m_watching = true;
    // asked again at each focus-in: what KWin applied since (it may not have said) or what it had
    if (!m_effect->follow()) {
        if (const auto caret = m_effect->caret()) {
            emitCaret(*caret);
        }
    }
}

void GhostService::SurfaceCaret(uint pid, int x, int y, int width, int height)
{
    if (fromEngine()) {
        m_effect->surfaceCaret(pid, QRect(x, y, width, height));
    }
}

void GhostService::forget(const QString &name)
{
    m_asking.remove(name);
    m_watch->removeWatchedService(name);
    if (name == m_engine) {
        m_engine.clear();
        m_watching = false;
        m_effect->hide(); // the engine went: nobody can accept what is shown
    }
}

void GhostService::emitCaret(const QRect &caret)
{
    if (m_engine.isEmpty() || !m_watching) {
        return;
    }
    // to the engine alone: where someone types is nobody else's business
    QDBusMessage msg = QDBusMessage::createTargetedSignal(m_engine, s_objectPath, s_busName, QStringLiteral("Caret"));
    msg << caret.x() << caret.y() << caret.width() << caret.height();
    QDBusConnection::sessionBus().send(msg);
}

void GhostService::emitHidden()
{
    if (m_engine.isEmpty()) {
        return;
    }
    QDBusConnection::sessionBus().send(QDBusMessage::createTargetedSignal(m_engine, s_objectPath, s_busName, QStringLiteral("Hidden")));
}

void GhostService::emitVisible(uint chars)
{
    if (m_engine.isEmpty()) {
        return;
    }
    QDBusMessage msg = QDBusMessage::createTargetedSignal(m_engine, s_objectPath, s_busName, QStringLiteral("Visible"));
    msg << chars;
    QDBusConnection::sessionBus().send(msg);
}

void GhostService::emitApp()
{
    if (m_engine.isEmpty()) {
        return;
    }
    // IBus names no Wayland client (KWin forwards them all): the engine's denylist and "Off in" need the
    // application, by its class (the Wayland app_id, X11's WM_CLASS class) and its program's file name
    QStringList ids;
    EffectWindow *window = effects->activeWindow();
    if (window && !effects->isScreenLocked()) {
        ids << window->windowClass().section(QLatin1Char(' '), -1).toLower();
        const QString exe = window->pid() > 0 ? QFileInfo(QStringLiteral("/proc/%1/exe").arg(window->pid())).symLinkTarget() : QString();
        ids << QFileInfo(exe).fileName().toLower();
    }
    QDBusMessage msg = QDBusMessage::createTargetedSignal(m_engine, s_objectPath, s_busName, QStringLiteral("App"));
    msg << ids;
    QDBusConnection::sessionBus().send(msg);
}

GhostEffect::GhostEffect()
    : m_service(new GhostService(this))
{
    if (InputMethod *im = kwinApp()->inputMethod()) {
        connect(im, &InputMethod::cursorRectangleChanged, this, &GhostEffect::follow);
        connect(im, &InputMethod::activeChanged, this, &GhostEffect::follow);
        connect(im, &InputMethod::activeWindowChanged, this, [this]() {
            m_caret.reset(); // another field's caret says nothing about this one
            m_surfaceCaret = false;
            lost();
            follow();
        });
    }
    connect(effects, &EffectsHandler::windowActivated, this, [this]() {
        m_service->emitApp();
        m_caret.reset();
        m_surfaceCaret = false;
        watchWindow();
        lost();
        follow();
    });
    watchWindow();
    // Nothing is drawn while the screen is locked (this effect paints above everything, the lock
    // screen included): locking takes the text off the screen and the engine hears Hidden.
    connect(effects, &EffectsHandler::screenAboutToLock, this, &GhostEffect::lost);
    connect(effects, &EffectsHandler::screenLockingChanged, this, [this](bool locked) {
        if (locked) {
            lost();
        }
        m_service->emitApp();
    });
    if (WaylandServer *server = waylandServer()) {
        connect(server->seat()->textInputV3(), &TextInputV3Interface::stateCommitted, this, [this]() {
            if (!m_pending.isValid()) {
                m_pending.start();
            }
        });
        connect(server->seat(), &SeatInterface::focusedTextInputSurfaceChanged, this, &GhostEffect::watchSurface);
        watchSurface();
    }
    follow();
    QDBusConnection bus = QDBusConnection::sessionBus();
    bus.registerObject(s_objectPath, m_service,
                       QDBusConnection::ExportScriptableSlots | QDBusConnection::ExportScriptableSignals
                           | QDBusConnection::ExportScriptableProperties);
    bus.registerService(s_busName);
}

GhostEffect::~GhostEffect()
{
    QDBusConnection bus = QDBusConnection::sessionBus();
    bus.unregisterService(s_busName);
    bus.unregisterObject(s_objectPath);
    if (m_texture && effects->isOpenGLCompositing()) {
        effects->makeOpenGLContextCurrent();
        m_texture.reset();
    }
}

// The focused window moved or changed size (the application resized itself, the user dragged it): KWin's caret
// for it is where it was, and the text would stand there, outside the window; it goes (the engine hears Hidden)
// until the field reports its caret again.
void GhostEffect::watchWindow()
{
    disconnect(m_frameWatch);
    if (EffectWindow *window = effects->activeWindow()) {
        m_frameWatch = connect(window, &EffectWindow::windowFrameGeometryChanged, this, [this]() {
            m_caret.reset();
            m_surfaceCaret = false;
            lost();
        });
    }
}

// The focused field's surface: each of its commits applies what its text input committed before.
void GhostEffect::watchSurface()
{
    disconnect(m_surfaceCommit);
    m_pending.invalidate();
    if (SurfaceInterface *surface = waylandServer()->seat()->focusedTextInputSurface()) {
        m_surfaceCommit = connect(surface, &SurfaceInterface::committed, this, [this]() {
            const bool applied = m_pending.isValid();
            m_pending.invalidate();
            if (applied) {
                follow(); // the text input's state took effect: its caret too, said or not
            }
        });
    }
}

bool GhostEffect::caretStale() const
{
    return !m_surfaceCaret && m_pending.isValid() && m_pending.elapsed() > s_staleMs;
}

bool GhostEffect::isActive() const
{
    return m_placed.has_value();
}

uint GhostEffect::show(const QString &text)
{
    m_text = text;
    refit(true);
    return m_placed ? m_placed->chars : 0;
}

void GhostEffect::offset(bool known, int x, int y, int dx, double advance)
{
    m_offset = known ? std::optional<Shift>(Shift{x, y, dx, std::isfinite(advance) ? advance : 0.0}) : std::nullopt;
    if (!m_text.isEmpty()) {
        refit();
    }
}

void GhostEffect::hide()
{
    m_text.clear();
    refit();
}

void GhostEffect::lost()
{
    hide();
}

void GhostEffect::refit(bool answering)
{
    const bool shown = m_placed.has_value();
    const uint before = shown ? m_placed->chars : 0;
    redraw();
    if (!m_placed) {
        m_text.clear();
        if (shown) {
            m_service->emitHidden(); // whatever took it away, the engine stops counting it as drawn
        }
    } else if (shown && !answering && m_placed->chars != before) {
        m_service->emitVisible(m_placed->chars); // Tab inserts what the screen shows
    }
}

// The caret moved (the application redrew after a key, or its window moved): the engine hears where,
// and the suggestion follows it or goes when it no longer fits.
bool GhostEffect::follow()
{
    InputMethod *im = kwinApp()->inputMethod();
    if (!im || m_surfaceCaret) { // the engine reads this field's caret from the accessibility bus
        return false;
    }
    const RectF r = im->cursorRectangle(); // logical, global; empty: no field with a text input
    if (r.width() <= 0 && r.height() <= 0 && r.x() == 0 && r.y() == 0) {
        return false;
    }
    const QRect caret(std::lround(r.x()), std::lround(r.y()), std::lround(r.width()), std::lround(r.height()));
    if (m_caret == caret) {
        return false;
    }
    m_caret = caret;
    m_service->emitCaret(caret);
    if (!m_text.isEmpty()) {
        refit();
    }
    return true;
}

// The accessibility bus said where the field's caret is (surface-relative): it stands where the window's buffer
// is, and KWin's own caret, keys behind, is neither waited for nor followed until the engine stops reading.
void GhostEffect::surfaceCaret(uint pid, const QRect &caret)
{
    if (caret.height() <= 0) { // the engine stopped reading it: KWin's caret again
        if (m_surfaceCaret) {
            m_surfaceCaret = false;
            m_caret.reset();
            follow();
        }
        return;
    }
    EffectWindow *window = effects->activeWindow();
    if (!window || window->pid() <= 0 || uint(window->pid()) != pid || caret.height() <= 0 || effects->isScreenLocked()) {
        return;
    }
    // Gecko's extents count its device pixels: the logical ones times its output's scale (the desktop tier's
    // Firefox at scale 2 had its suggestion at twice the caret's distance from the window's corner)
    const LogicalOutput *output = window->screen();
    const qreal scale = output && output->scale() > 0 ? output->scale() : 1.0;
    const QPointF origin = window->bufferGeometry().topLeft(); // logical, as the surface's coordinates
    m_caret = QRect(std::lround(origin.x() + caret.x() / scale), std::lround(origin.y() + caret.y() / scale),
                    std::lround(caret.width() / scale), std::max(1, int(std::lround(caret.height() / scale))));
    m_surfaceScale = scale;
    m_surfaceCaret = true;
    if (!m_text.isEmpty()) {
        refit();
    }
}

std::optional<GhostEffect::Placed> GhostEffect::place() const
{
    EffectWindow *window = effects->activeWindow();
    if (m_text.isEmpty() || !window || !m_caret || effects->isScreenLocked()) {
        return std::nullopt;
    }
    const QRect caret = *m_caret;
    const QRectF frame = window->frameGeometry();
    // where the engine says the next character goes (Offset), else at the caret's left edge (a thin caret's
    // next character, a block cursor's cell)
    const bool shifted = m_offset && std::abs(m_offset->x - caret.x()) <= 1 && std::abs(m_offset->y - caret.y()) <= 1;
    const qreal x = shifted ? caret.x() + m_offset->dx : caret.x();
    const qreal y = caret.y();
    const qreal h = caret.height();
    const qreal right = frame.x() + frame.width() - s_edge;
    if (h <= 0 || x < frame.x() || x > right || y < frame.y() || y + h > frame.y() + frame.height()) {
        return std::nullopt;
    }
    const qreal room = right - x;
    if (room < s_minRoom) {
        return std::nullopt;
    }
    Placed placed;
    // a field in a fixed-width font: the system's, each character as wide as the field's (the engine measured it)
    // the engine measured the advance in the caret's units: a caret read from the accessibility bus, its scale's
    const qreal measured = m_offset ? m_offset->advance / (m_surfaceCaret ? m_surfaceScale : 1.0) : 0;
    const qreal advance = measured > 0 && measured < 4 * h ? measured : 0;
    placed.font = QFontDatabase::systemFont(advance > 0 ? QFontDatabase::FixedFont : QFontDatabase::GeneralFont);
    placed.font.setPixelSize(std::max(6, int(std::lround(h * s_textOfCaret))));
    if (advance > 0) {
        // as large as the field's (its advance over the size's), within the line; spaced for what is left
        const qreal natural = QFontMetricsF(placed.font).horizontalAdvance(QLatin1Char('M'));
        placed.font.setPixelSize(std::max(6, int(std::lround(std::min(h, placed.font.pixelSize() * advance / natural)))));
        placed.font.setLetterSpacing(QFont::AbsoluteSpacing, advance - QFontMetricsF(placed.font).horizontalAdvance(QLatin1Char('M')));
    }
    const QFontMetricsF metrics(placed.font);
    const QList<uint> chars = m_text.toUcs4();
    if (metrics.horizontalAdvance(m_text) <= room) {
        placed.shown = m_text;
        placed.chars = chars.size();
    } else {
        // the most leading characters that fit in full before an ellipsis
        const QString ellipsis(QChar(0x2026));
        const qreal limit = room - metrics.horizontalAdvance(ellipsis);
        qsizetype lo = 0, hi = chars.size();
        while (lo < hi) {
            const qsizetype mid = (lo + hi + 1) / 2;
            if (metrics.horizontalAdvance(QString::fromUcs4(reinterpret_cast<const char32_t *>(chars.constData()), mid)) <= limit) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if (lo == 0) {
            return std::nullopt;
        }
        placed.shown = QString::fromUcs4(reinterpret_cast<const char32_t *>(chars.constData()), lo) + ellipsis;
        placed.chars = lo;
    }
    const qreal width = std::ceil(metrics.horizontalAdvance(placed.shown)) + 1;
    const qreal height = std::ceil(metrics.height());
    placed.rect = QRectF(x, std::round(y + (h - height) / 2), width, height);
    return placed;
}

void GhostEffect::redraw()
{
    m_placed = place();
    m_imageScale = 0; // rendered again at the next paint
    repaint();
}

void GhostEffect::repaint()
{
    if (!m_painted.isEmpty()) {
        effects->addRepaint(Rect(m_painted.toAlignedRect()));
    }
    m_painted = m_placed ? m_placed->rect : QRectF();
    if (!m_painted.isEmpty()) {
        effects->addRepaint(Rect(m_painted.toAlignedRect()));
    }
}

void GhostEffect::paintScreen(const RenderTarget &renderTarget, const RenderViewport &viewport, int mask, const Region &deviceRegion,
                              LogicalOutput *screen)
{
    effects->paintScreen(renderTarget, viewport, mask, deviceRegion, screen);
    if (!m_placed || effects->isScreenLocked() || !viewport.renderRect().intersects(RectF(m_placed->rect))) {
        return;
    }
    const qreal scale = viewport.scale();
    if (m_image.isNull() || m_imageScale != scale) {
        const QSize size = (m_placed->rect.size() * scale).toSize();
        m_image = QImage(size, QImage::Format_ARGB32_Premultiplied);
        m_image.setDevicePixelRatio(scale);
        m_image.fill(Qt::transparent);
        QPainter painter(&m_image);
        painter.setRenderHint(QPainter::TextAntialiasing);
        painter.setFont(m_placed->font);
        painter.setPen(s_grey);
        painter.drawText(QRectF(QPointF(0, 0), m_placed->rect.size()), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine,
                         m_placed->shown);
        painter.end();
        m_imageScale = scale;
        if (m_texture && effects->isOpenGLCompositing()) {
            m_texture.reset(); // the context is current while painting
        }
    }
    if (effects->isOpenGLCompositing()) {
        if (!m_texture) {
            m_texture = GLTexture::upload(m_image);
            if (!m_texture) {
                return;
            }
        }
        const Rect pixels = RectF(m_placed->rect).scaled(scale).rounded();
        glEnable(GL_BLEND);
        glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA); // the image is premultiplied
        ShaderBinder binder(ShaderTrait::MapTexture | ShaderTrait::TransformColorspace);
        QMatrix4x4 mvp = viewport.projectionMatrix();
        mvp.translate(pixels.x(), pixels.y());
        binder.shader()->setUniform(GLShader::Mat4Uniform::ModelViewProjectionMatrix, mvp);
        binder.shader()->setColorspaceUniforms(ColorDescription::sRGB, renderTarget.colorDescription(), RenderingIntent::Perceptual);
        m_texture->render(pixels.size());
        glDisable(GL_BLEND);
    } else if (effects->compositingType() == QPainterCompositing) {
        effects->scenePainter()->drawImage(m_placed->rect, m_image);
    }
}

} // namespace KWin

#include "moc_ghosteffect.cpp"
