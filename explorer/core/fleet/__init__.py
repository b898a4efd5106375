"""Many machines: problems measured on a Dask cluster's workers, shards and merges of CSV pieces (Qt-free)."""
