"""``mrgym calibrate``: the staged fit of the model's parameters on the calibration claims
(:mod:`mrgym.calibration`, docs/calibration.md)."""

from __future__ import annotations

import argparse
import sys


def add_parser(sub, formatter) -> None:
    c = sub.add_parser(
        "calibrate",
        help="fit the model's parameters on the calibration claims (docs/calibration.md)",
        description="Fit ModelParams fields stage by stage (A native variability, B "
        "virtualization overheads, C virtual interference) with scipy.optimize on fixed "
        "seeds, and write a JSON of the fitted parameters and each target's residual: a new "
        "runs/calibrate-YYYYmmdd-HHMMSS/calibration.json, --out FILE, or with --update "
        "docs/reproduction/calibration.json. Parameters ModelParams lacks are skipped.",
        formatter_class=formatter,
    )
    c.add_argument(
        "--stage",
        default="all",
        help="A, B, C, a comma-separated list (run in that order), or all",
    )
    c.add_argument(
        "--quick", action="store_true", help="one seed and a tiny budget per stage: a smoke run"
    )
    c.add_argument("--out", metavar="FILE", help="write the JSON here")
    c.add_argument("--update", action="store_true", help="write docs/reproduction/calibration.json")
    c.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from mrgym.calibration import run
    from mrgym.calibration.fit import STAGES

    stages = list(STAGES) if args.stage == "all" else [s.strip() for s in args.stage.split(",")]
    path = run(stages, args.quick, args.out, args.update, say=lambda m: print(m, file=sys.stderr))
    print(f"wrote {path}")
    return 0
