"""Timing on this host: the timing loop, the interference meter behind every row's quality, the one retry rule, the machine's facts and peak, and the measuring process's allocator."""
