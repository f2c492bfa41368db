"""Tightens the dev stack's data folder (.data: the SQLite database, Kafka's segments, Redis, the registry, replay
outputs, logs) to owner-only access, saying so when it was open; `make run` and `make test` run it before they start
anything. A folder made before the console set umask 077 kept the modes it was made with (0755, files 0644).

    python -m devstack.private_data [FOLDER]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from console.paths import DATA_DIR
from console.private_files import tighten


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, nargs="?", default=DATA_DIR)
    args = parser.parse_args(argv)
    args.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    said = tighten(args.folder)
    if said:
        print(said, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
