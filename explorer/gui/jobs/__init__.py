"""Jobs off the GUI thread: one job worker for every kind of job, and the measuring process as the window sees it."""
