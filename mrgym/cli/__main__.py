"""``python -m mrgym.cli``: the ``mrgym`` command."""

from mrgym.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
