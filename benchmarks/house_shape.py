"""The shape of app/ as a newcomer meets it: its modules and packages, the imports between them,
whether any packages import each other in a circle, the largest modules, the uses of `Any`, and
any lookup of the project's own modules by string (importlib), which a static graph cannot see.

The import graph is grimp's (import-linter's) and its circles networkx's, both installed with the
linters: `pip install -e '.[lint]'`.
A circle here is a set of packages at one depth (app.x, or app.x.y) that reach each other through
imports; `Any` is counted as a word on lines that do not import it.

    python benchmarks/house_shape.py
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

import grimp
import networkx

APP = Path(__file__).resolve().parents[1] / "app"
ANY = re.compile(r"\bAny\b")
OWN_LOOKUP = re.compile(r"importlib\.import_module\(|__import__\(")


def circles(arrows: set[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected sets of more than one package: packages that reach each other."""
    graph = networkx.DiGraph(arrows)
    return sorted(sorted(c) for c in networkx.strongly_connected_components(graph) if len(c) > 1)


def at_depth(name: str, depth: int) -> str | None:
    parts = name.split(".")
    return ".".join(parts[:depth]) if len(parts) >= depth else None


def package_arrows(edges: Iterable[tuple[str, str]], depth: int) -> set[tuple[str, str]]:
    out = set()
    for a, b in edges:
        pa, pb = at_depth(a, depth), at_depth(b, depth)
        if pa and pb and pa != pb:
            out.add((pa, pb))
    return out


def main() -> int:
    sys.path.insert(0, str(APP.parent))
    graph = grimp.build_graph("app")
    modules = sorted(m for m in graph.modules if m == "app" or m.startswith("app."))
    packages = {m for m in modules if any(other.startswith(m + ".") for other in modules)}
    edges = [(a, b) for a in modules for b in graph.find_modules_directly_imported_by(a) if b.startswith("app")]
    files = sorted(APP.rglob("*.py"))
    lines = {path: path.read_text(encoding="utf-8").splitlines() for path in files}
    print(f"app/: {len(modules)} modules in {len(packages)} packages, {sum(len(v) for v in lines.values())} lines; "
          f"{len(edges)} imports between its modules")
    for depth in (2, 3):
        arrows = package_arrows(edges, depth)
        names = {x for arrow in arrows for x in arrow}
        found = circles(arrows)
        print(f"depth {depth} (app{'.x' * (depth - 1)}): {len(names)} that import or are imported, {len(arrows)} arrows "
              f"between them, circles: {found or 'none'}")
    largest = sorted(((len(v), p) for p, v in lines.items()), reverse=True)[:3]
    print("largest modules: " + ", ".join(f"{p.relative_to(APP.parent)} {n}" for n, p in largest))
    uses = sum(len(ANY.findall(line)) for v in lines.values() for line in v if "import" not in line)
    print(f"uses of Any: {uses}")
    lookups = [f"{p.relative_to(APP.parent)}:{i}" for p, v in lines.items() for i, line in enumerate(v, 1)
               if OWN_LOOKUP.search(line)]
    print(f"modules looked up by string: {len(lookups)} {lookups or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
