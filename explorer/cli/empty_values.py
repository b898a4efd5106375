"""Before any work: an option or argument typed with an empty value (`--input ''`, `--resume ""`) is refused
in one sentence. argparse takes '' as a value, and most of these options treat a false value as "not given",
so '' silently ran the default (the default input, no resume, a local run instead of --cluster, no ISA cap).
Output files (--csv, --timeline, --screenshot) are checked beside them, in common.check_outputs.
"""

from __future__ import annotations

from explorer.core.errors import InputError

# dest -> (what the user typed, what to give instead)
_OPTIONS = {
    "input": ("--input", "a shape such as 1,3,224,224 or module:function"),
    "resume": ("--resume", "the CSV to go on with"),
    "cluster": ("--cluster", "the scheduler's address, e.g. tcp://10.0.0.5:8786"),
    "shard": ("--shard", "I/N, e.g. 0/2"),
    "dtype": ("--dtype", "f32, bf16 or f16"),
    "isa": ("--isa", "an ISA name such as avx2, or default for no cap"),
    "modes": ("--modes", "comma-separated modes"),
    "against": ("--against", "a host of the CSV"),
    "tag": ("--tag", "a oneDNN format tag such as aBcd16b"),
    "dims": ("--dims", "logical dims such as 2,17,5,4"),
    "offset": ("--offset", "a logical index such as 1,1,0,0"),
    "path": ("--path", "a path name such as mkldnn"),
    "batch": ("--batch", "a batch file or the name of a shipped batch"),
    "size": ("--size", "WxH such as 1440x900"),
    "file": ("the batch file", "a path, or the name of a shipped batch such as quick"),
    "a": ("the first CSV", "a file name"),
    "b": ("the second CSV", "a file name, or leave it out"),
    "pieces": ("a CSV to merge", "a file name"),
    "desc": ("the descriptor", "one like mb2ic16ih14oc16oh14kh3ph1"),
}


def check_not_empty(args) -> None:
    """One sentence (InputError, exit 2) for the first empty or all-blank value among the parsed arguments."""
    for dest, (name, give) in _OPTIONS.items():
        value = getattr(args, dest, None)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and not v.strip():
                raise InputError(f"{name} is empty; give {give}.", dest)
