from __future__ import annotations

from kvlint.main import main

raise SystemExit(main())
