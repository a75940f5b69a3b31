"""Checks editors/helix: the TOML parses and says what Helix needs to start `netc lsp` for
.net files with the server's settings and to colour them with the tree-sitter grammar
(Helix itself is not packaged for the build machines, so it cannot be driven here; the
queries are compiled against the grammar by .ci/packaging). Prints `N passed, N failed`;
exits 1 on a failure."""

import pathlib
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
SETTINGS = {"enabled", "shape", "bytes", "params", "macs", "instances", "maxLength"}

checks = []


def check(name, ok):
    checks.append(ok)
    print(("ok   " if ok else "FAIL ") + name)


languages = tomllib.loads((HERE / "languages.toml").read_text())
config = tomllib.loads((HERE / "config.toml").read_text())
server = languages["language-server"]["netc"]
check("the server is `netc lsp`", [server["command"], *server["args"]] == ["netc", "lsp"])
hints = server["config"]["netc"]["inlayHints"]
check("its settings are the server's inlay-hint settings", set(hints) <= SETTINGS and hints["enabled"] is True)
(language,) = [lang for lang in languages["language"] if lang["name"] == "netc"]
check(".net files are netc", language["file-types"] == ["net"])
check("the language uses the server", language["language-servers"] == ["netc"])
check("# comments, 4-space indentation", language["comment-token"] == "#" and language["indent"]["unit"] == "    ")
check("inlay hints are displayed", config["editor"]["lsp"]["display-inlay-hints"] is True)
(grammar,) = [g for g in languages["grammar"] if g["name"] == language["grammar"]]
check(
    "the language uses the tree-sitter grammar of editors/tree-sitter-net",
    grammar["source"]["subpath"] == "editors/tree-sitter-net"
    and (HERE.parent / "tree-sitter-net" / "src" / "parser.c").is_file(),
)
check(
    "its highlight queries are where Helix looks for the language's (queries/netc/)",
    (HERE / "queries" / language["name"] / "highlights.scm").is_file(),
)
print(f"helix config: {sum(checks)} passed, {len(checks) - sum(checks)} failed")
sys.exit(0 if all(checks) else 1)
