"""The main window: its layout, menus, files, session glue, peak and the inspector of the selected row."""
