"""The package's structure: its modules import one another without a cycle, and only at the top
of a module (an import inside a function is for an optional dependency, never a tandem module),
so that each module can be read, and loaded, after the ones it builds on."""
import ast
import os

import pytest

PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python",
                       "tandem")


def modules():
    """Module name -> (path, is a package's __init__)."""
    found = {}
    top = os.path.dirname(PACKAGE)
    for folder, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                parts = os.path.relpath(path, top)[:-3].split(os.sep)
                is_package = parts[-1] == "__init__"
                found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def imported(name, is_package, node, known):
    """The tandem modules an import statement of module `name` loads: a name it takes from a
    package counts as that package, a submodule it names as the submodule."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in known]
    base = name if is_package else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    module = (base + "." + node.module if node.module else base) if node.level else node.module
    out = [module + "." + a.name if module + "." + a.name in known else module for a in node.names]
    return [m for m in out if m in known]


def import_graph():
    """(module -> set of modules it imports, [(module, line) of imports inside a function])."""
    known = modules()
    graph, inside = {name: set() for name in known}, []
    for name, (path, is_package) in known.items():
        with open(path) as f:
            tree = ast.parse(f.read(), path)

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    targets = imported(name, is_package, child, known)
                    graph[name].update(targets)
                    if targets and nested:
                        inside.append((name, child.lineno))
                visit(child, nested)

        visit(tree, False)
    return graph, inside


def test_the_graph_sees_the_package():
    graph, _ = import_graph()
    assert "tandem.tracer" in graph and "tandem.ops" in graph and "tandem.nki.language" in graph
    assert "tandem.ops" in graph["tandem.nki.isa"]


def test_no_module_imports_one_that_imports_it_back():
    graph, _ = import_graph()
    state, path = {}, []

    def visit(module):
        state[module] = "open"
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                pytest.fail("import cycle: " + " -> ".join(path[path.index(target):] + [target]))
            if target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_tandem_modules_are_imported_at_the_top_of_a_module():
    _, inside = import_graph()
    assert inside == [], f"imports of tandem modules inside a function: {inside}"
