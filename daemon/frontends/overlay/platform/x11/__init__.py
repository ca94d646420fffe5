"""The X11 backend, built on python-xlib: focus, caret fallback, accept-key
suppression (XGrabKey) and text injection (XTEST).  ``backend`` is the front
door for the platform selector; only this package imports Xlib."""
