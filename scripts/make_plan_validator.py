"""Write the plan schema's validator ahead of time (simsample/io/_plan_validator.py).

    python scripts/make_plan_validator.py [OUTPUT]

Run it after changing ``simsample/schemas/plan.schema.json``: until then plans are still checked,
by a validator compiled in each process (0.02 s), and ``tests/plans/test_plan_validator.py``
fails, naming this script.
"""

from __future__ import annotations

import sys
from pathlib import Path

from simsample.planfile import VALIDATOR_MODULE, validator_source

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / VALIDATOR_MODULE
    target.write_text(validator_source(), encoding="utf-8")
    print(f"wrote {target}")
