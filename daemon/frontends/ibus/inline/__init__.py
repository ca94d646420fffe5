"""The suggestion drawn inline, as grey text at the caret, by the desktop's compositor instead of IBus's
popup: the GNOME Shell extension (``gnome_shell/``) and the KWin effect (``kwin/``), their one protocol
(``protocol.xml``, read by :mod:`.protocol`), their installers and ``doctor`` checks
(:mod:`.shell_extension`, :mod:`.kwin_effect`, :mod:`.plugin_probe`), and the engine's end of the link
(:mod:`.shell_ghost`, which trusts a plug-in only inside its compositor: :mod:`.compositor`)."""
