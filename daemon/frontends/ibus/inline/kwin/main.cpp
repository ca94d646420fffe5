// The plugin's entry point: KWin loads ghosttype's effect from its Qt plugin path (kwin/effects/plugins).
#include "ghosteffect.h"

#include "effect/effecthandler.h"

namespace KWin
{

// Wayland only: on X11 the engine's popup and ghosttype's own overlay serve.
KWIN_EFFECT_FACTORY_SUPPORTED(GhostEffect, "metadata.json", return effects->waylandDisplay() != nullptr;)

} // namespace KWin

#include "main.moc"
