# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers shared by the end-to-end scripts (imported from their folder)."""


def order_kept(out):
    """frm's -v output with workers: each "removed directory 'D'" line comes
    after every line that names something under D/."""
    if isinstance(out, bytes):
        out = out.decode(errors="replace")
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("removed directory '"):
            d = l[len("removed directory '"):-1] + "/"
            if any(d in later for later in lines[i + 1:]):
                return False
    return True
