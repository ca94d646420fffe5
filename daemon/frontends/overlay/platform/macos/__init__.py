"""The macOS backend (pyobjc): event-tap capture, Accessibility, Quartz
typing.  ``backend`` is the front door for the platform selector."""
