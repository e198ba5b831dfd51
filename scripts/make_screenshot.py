"""Make docs/report.png, the README's picture of ``simsample report``, in headless Chromium.

The page is the one ``make demo`` writes (``demo-out/report.html``: a margin plan of the bundled
PyTorch-profiler trace with three samplers' ε/rate sweeps); run ``make demo`` first. The top of
the page is captured at 1200 px wide and scaled down to 900 px.

    .venv/bin/python scripts/make_screenshot.py [PAGE] [--height 2600]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import chromium, console_errors, open_page  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", nargs="?", default=str(ROOT / "demo-out" / "report.html"))
    ap.add_argument("--height", type=int, default=2600, help="pixels of the page's top to capture")
    ap.add_argument("-o", "--output", default=str(ROOT / "docs" / "report.png"))
    args = ap.parse_args()
    from PIL import Image  # installed with matplotlib

    raw = Path(args.output).with_suffix(".raw.png")
    with chromium(1200, args.height) as drv:
        open_page(drv, Path(args.page))
        errors = console_errors(drv)
        if errors:
            raise SystemExit(f"console errors: {errors}")
        drv.save_screenshot(str(raw))
    img = Image.open(raw).convert("RGB")
    img = img.resize((900, round(img.height * 900 / img.width)), Image.LANCZOS)
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(args.output, optimize=True)
    raw.unlink()
    print(f"{args.output}: {img.width}x{img.height}, {Path(args.output).stat().st_size / 1e3:.0f} kB")


if __name__ == "__main__":
    main()
