import sys

from omni.cli.main import main

sys.exit(main())
