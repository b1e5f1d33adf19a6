"""Prints the operations table (table.py) as JSON: ``python3 -m gatepost.operations``."""

import json

from .table import OPERATIONS

if __name__ == "__main__":
    print(json.dumps([{"name": name, "method": op.method, "path": op.path} for name, op in OPERATIONS.items()], indent=2))
