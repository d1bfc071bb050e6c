"""Writes a vectors document the way every script here does: JSON, then one newline."""

import json


def write_vectors(path, document, **dump_options):
    """Writes `document` to `path` with `json.dump(**dump_options)` and a final newline."""
    with open(path, "w") as f:
        json.dump(document, f, **dump_options)
        f.write("\n")
