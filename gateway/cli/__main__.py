"""`python -m gateway.cli`: the `bench-gateway` command."""

import sys

from gateway.cli.main import main

sys.exit(main())
