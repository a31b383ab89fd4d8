"""``python -m enkcvs.runs``: :func:`enkcvs.runs.cli.main`."""

import sys

from enkcvs.runs.cli import main

sys.exit(main())
