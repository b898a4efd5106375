"""Where measurements run: the measuring child process and its pool, one per allocator setting, for every kind of job."""
