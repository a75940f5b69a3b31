"""Writes the highlight queries of Helix and Neovim from queries/highlights.scm, the one the
tree-sitter CLI and its tests use. `--check` fails (exit 1) instead when a written file
differs (.ci/packaging runs it).

All three give a node the last pattern that matches it, so the patterns keep their order.
Neovim looks for the file as queries/<language>/highlights.scm on its runtimepath, under
the parser's name (`net`); nvim-treesitter's capture names are the CLI's. Helix looks for it
under the language's name (`netc`) and names captures its own way (its theme scopes).
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
EDITORS = HERE.parent
SOURCE = HERE / "queries" / "highlights.scm"

# nvim-treesitter's capture names (as in queries/highlights.scm) -> Helix's theme scopes.
HELIX_NAMES = {
    "@comment.documentation": "@comment.line.documentation",
    "@keyword.conditional": "@keyword.control.conditional",
    "@keyword.repeat": "@keyword.control.repeat",
    "@keyword.return": "@keyword.control.return",
    "@number.float": "@constant.numeric.float",
    "@number": "@constant.numeric.integer",
    "@boolean": "@constant.builtin.boolean",
    "@property": "@variable.other.member",
    "@function.call": "@function",
    "@module": "@namespace",
}


def header(editor: str) -> str:
    return (
        f"; Generated from editors/tree-sitter-net/queries/highlights.scm for {editor} by\n"
        "; editors/tree-sitter-net/editor_queries.py: edit that file and run this script.\n"
    )


def body_of(text: str) -> str:
    """The query without its leading comment lines."""
    lines = text.splitlines(keepends=True)
    while lines and lines[0].startswith(";"):
        lines.pop(0)
    return "".join(lines)


def helix(text: str) -> str:
    body = body_of(text)
    for ours, theirs in HELIX_NAMES.items():
        body = body.replace(ours + ")", theirs + ")").replace(ours + "\n", theirs + "\n").replace(ours + " ", theirs + " ")
    return header("Helix (its scope names)") + body


def neovim(text: str) -> str:
    return header("Neovim") + body_of(text)


def main() -> int:
    text = SOURCE.read_text()
    targets = {
        EDITORS / "helix" / "queries" / "netc" / "highlights.scm": helix(text),
        EDITORS / "neovim" / "queries" / "net" / "highlights.scm": neovim(text),
    }
    check = "--check" in sys.argv
    stale = []
    for path, content in targets.items():
        if check:
            if not path.exists() or path.read_text() != content:
                stale.append(path)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
            print(f"wrote {path.relative_to(EDITORS.parent)}")
    for path in stale:
        print(f"{path.relative_to(EDITORS.parent)} is stale: run python3 {pathlib.Path(__file__).relative_to(EDITORS.parent)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
