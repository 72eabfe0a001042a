import sys

from traceinspect.cli import main

sys.exit(main())
