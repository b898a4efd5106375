"""Qt desktop app over explorer.core, in layers (import-linter checks the order):

    app       start-up checks, settings, theme, the window made
    window    the main window and its parts: menus, files, session sync, peak, the selected row's inspector
    tabs | run | inspect    the Sweep/Roofline/Compare/Model tabs, the Run tab, the Layouts and Trace views
    charts    the sweep charts and their shared axes and hover
    jobs      the one job worker, and the measuring process as the window sees it
    common    path colours and themes, small widgets, chart export, the session bridge

The views keep no state of their own: they follow explorer.core.session.state through common.session_bridge.
"""
