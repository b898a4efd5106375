"""Which machine measured a row: the host columns a cluster run adds to the local schema.

`host` names the machine (its hostname; `hostname/worker-name` when several workers share one machine, which
is allowed but disturbs the measurements: a worker per machine is the rule) and `worker` is the Dask worker's
address. The CPU model, ISA, torch and oneDNN versions are the local schema's own `cpu`, `isa`,
`torch_version` and `onednn_version` columns, read in the worker's measuring process like any local row.
"""

from __future__ import annotations

import socket

from explorer.core.report.results import CSV_COLUMNS

FLEET_COLUMNS = ("host", "worker")
CLUSTER_COLUMNS = CSV_COLUMNS + FLEET_COLUMNS


def worker_facts() -> dict:
    """Read on the worker: its hostname and address."""
    from distributed import get_worker

    w = get_worker()
    return {"host": socket.gethostname(), "worker": w.address}


def host_labels(hostnames: dict[str, str], names: dict[str, object]) -> dict[str, str]:
    """worker address -> host label: the hostname, made unique by the worker's name where machines repeat."""
    count: dict[str, int] = {}
    for h in hostnames.values():
        count[h] = count.get(h, 0) + 1
    return {addr: (h if count[h] == 1 else f"{h}/{names.get(addr, addr)}") for addr, h in hostnames.items()}
