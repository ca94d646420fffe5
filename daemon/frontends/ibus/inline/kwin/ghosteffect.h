// ghosttype's inline suggestion for KDE Plasma 6: a KWin effect.
//
// On Plasma, IBus's popup is an input-method panel that KWin places under the caret, never on its
// line, and KWin forwards no preedit colours, so the engine cannot draw grey text at the caret by
// itself.  KWin knows the focused field's caret (its text-input cursor rectangle), so this effect
// draws the suggestion there, in the compositor, as grey text starting at the caret with no box.
//
// It speaks the same D-Bus interface as ghosttype's GNOME Shell extension (gnome_shell/extension.js),
// on KWin's own session-bus connection: the engine's handshake is that the owner of the interface's
// name also owns org.kde.KWin and its process is KWin.  Only the engine is served: Register(), from a
// caller whose process is ghosttype's engine as IBus starts it (isEngine in ghosteffect.cpp: its
// parent runs ibus-daemon, an executable only root can change, and its command ends with the
// arguments ibus-daemon gives it), makes that caller's unique name the only one served until it
// leaves the bus; every other caller of Register, Show, Offset, Hide and Watch gets AccessDenied and
// changes nothing.  Show(text) answers whether the text is on screen and how many of its characters
// are visible in full; nothing is drawn outside the focused window (the text is cut with an ellipsis
// at its edge, and nothing is drawn with less than MinRoom px of room, when the caret is not inside
// the window, or while the screen is locked), and a text of more than s_maxChars characters is
// refused (InvalidArgs) unmeasured.  Hidden (no arguments, sent to the engine alone) says the text
// left the screen, whatever took it away (focus or caret moved, the screen locked, Hide, a refused
// Show); Visible(chars), to the engine alone, that the text shown was placed again without a Show
// (the caret moved, an Offset) and another number of its characters is visible in full.  Offset(known, x, y, dx, advance): where the next character goes against the caret rectangle at
// (x, y), and how wide the field's characters all are where its font is fixed-width (0: not; drawn in the
// system's fixed font, spaced to it) (the engine learns both, see caret_trail.py).  Watch(): KWin gives an input method no caret on
// this route, so the engine hears the focused field's caret rectangle as the Caret signal, sent to it
// alone.  SurfaceCaret(pid, x, y, w, h): a field whose caret KWin never applied (Thunderbird's compose
// window commits no surface after its rectangles), read by the engine from the accessibility bus, relative
// to the surface of the focused window of process pid: placed where that window's buffer is, while it has the
// focus (no Caret is sent for it, and KWin's own caret is not followed until a SurfaceCaret of no height says
// the engine stopped reading).  The text is never logged or stored.
#pragma once

#include "effect/effect.h"

#include <QDBusContext>
#include <QElapsedTimer>
#include <QFont>
#include <QImage>
#include <QObject>
#include <QRect>
#include <QSet>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

class QDBusServiceWatcher;

namespace KWin
{

class GLTexture;
class GhostEffect;

//! The D-Bus object: the engine's calls, forwarded to the effect.
class GhostService : public QObject, protected QDBusContext
{
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.IBus.GhostType.Shell")
    Q_PROPERTY(uint Version READ version)

public:
    explicit GhostService(GhostEffect *effect);
    uint version() const;
    //! The focused field's caret, to the registered engine alone once it called Watch.
    void emitCaret(const QRect &caret);
    //! The text left the screen: the registered engine alone hears it.
    void emitHidden();
    //! Another number of the shown text's characters is visible in full: the registered engine alone hears it.
    void emitVisible(uint chars);
    //! The application that has the keys (ids only, never a title): the registered engine alone hears it.
    void emitApp();

public Q_SLOTS:
    Q_SCRIPTABLE void Register();
    Q_SCRIPTABLE bool Show(const QString &text, uint &chars);
    Q_SCRIPTABLE void Offset(bool known, int x, int y, int dx, double advance);
    Q_SCRIPTABLE void Hide();
    Q_SCRIPTABLE void Watch();
    Q_SCRIPTABLE void SurfaceCaret(uint pid, int x, int y, int width, int height);

Q_SIGNALS:
    //! Declared for introspection; never emitted as a broadcast (emitHidden sends it to the engine).
    Q_SCRIPTABLE void Hidden();
    //! Declared for introspection; never emitted as a broadcast (emitVisible sends it to the engine).
    Q_SCRIPTABLE void Visible(uint chars);
    //! Declared for introspection; never emitted as a broadcast (emitCaret sends it to the engine).
    Q_SCRIPTABLE void Caret(int x, int y, int width, int height);
    //! Declared for introspection; never emitted as a broadcast (emitApp sends it to the engine).
    Q_SCRIPTABLE void App(const QStringList &ids);

private:
    //! The caller is the registered engine; anyone else gets AccessDenied.
    bool fromEngine();
    void forget(const QString &name);

    GhostEffect *m_effect;
    QString m_engine; //!< the unique name of the engine that registered: the only caller served
    bool m_watching = false; //!< the engine called Watch: it hears Caret
    QSet<QString> m_asking; //!< callers of Register whose process is being asked for
    QDBusServiceWatcher *m_watch; //!< the engine and those callers, until they leave the bus
};

class GhostEffect : public Effect
{
    Q_OBJECT

public:
    GhostEffect();
    ~GhostEffect() override;

    void paintScreen(const RenderTarget &renderTarget, const RenderViewport &viewport, int mask, const Region &deviceRegion,
                     LogicalOutput *screen) override;
    bool isActive() const override;
    int requestedEffectChainPosition() const override
    {
        return 99; // above every window and other effect's drawing
    }

    //! Draws text at the caret; the number of characters visible in full (0: nothing drawn).
    uint show(const QString &text);
    //! KWin's caret for the focused field is behind the application's (see m_pending).
    bool caretStale() const;
    void offset(bool known, int x, int y, int dx, double advance);
    //! Takes the text off the screen (the engine hears Hidden when some was there).
    void hide();
    //! The caret as the engine hears it (Watch), or nothing without a focused field.
    std::optional<QRect> caret() const
    {
        return m_caret;
    }
    //! Reads KWin's caret; true when it moved (the engine heard where).
    bool follow();
    //! The caret the engine read from the accessibility bus, relative to the surface of process pid's window.
    void surfaceCaret(uint pid, const QRect &caret);

private:
    struct Placed {
        QRectF rect; //!< logical, where the image goes
        QString shown; //!< what is drawn (with the ellipsis)
        uint chars = 0; //!< characters of the text visible in full
        QFont font;
    };
    std::optional<Placed> place() const;
    void redraw();
    //! Places the text again; when it no longer fits it goes (Hidden when some was on screen).  Unless
    //! ``answering`` (Show answers with the count), the engine hears Visible when the count changed.
    void refit(bool answering = false);
    void lost();
    void repaint();
    void watchSurface();
    void watchWindow();

    GhostService *m_service;
    QString m_text;
    std::optional<QRect> m_caret; //!< the focused field's caret, logical (null: none reported for this window)
    struct Shift {
        int x, y, dx;
        double advance; //!< > 0: the field's characters are all this wide (a fixed-width font)
    };
    std::optional<Shift> m_offset;
    // Since when the focused field's text input has committed state that KWin has not applied yet: a
    // text-input-v3 (version 2) cursor rectangle takes effect only with the next commit of the field's
    // own surface, and an application that draws into a subsurface (Firefox) seldom makes one, so KWin's
    // caret can stay where the application was many keys ago.
    QElapsedTimer m_pending;
    //! m_caret came from the accessibility bus (surfaceCaret): KWin's own caret, keys behind, is neither waited
    //! for nor followed until the engine stops reading (a SurfaceCaret of no height) or another window is active
    bool m_surfaceCaret = false;
    qreal m_surfaceScale = 1.0; //!< device pixels per logical one in the accessibility bus's caret (its output's scale)
    QMetaObject::Connection m_surfaceCommit;
    QMetaObject::Connection m_frameWatch; //!< the focused window's moves and resizes
    std::optional<Placed> m_placed; //!< what is on screen now
    QRectF m_painted; //!< where it was drawn last (repainted when it goes)
    QImage m_image; //!< m_placed rendered at m_imageScale
    qreal m_imageScale = 0;
    std::unique_ptr<GLTexture> m_texture;
};

} // namespace KWin
