"""How far the tree-sitter grammar agrees with netc's parser, on every `.net` file of the
repository and every ```net example of its Markdown documents.

    python3 editors/tree-sitter-net/agreement.py TREE_SITTER NETC

A sample is syntactically valid for netc when `netc check` reports no lexical or syntax
error (a code E01xx) in it; other errors (names, shapes) do not count. The grammar must
parse every valid sample without an ERROR or MISSING node: a sample where it does not fails
the run (exit 1). Samples netc rejects are expected to have error nodes too; those the
grammar accepts anyway are listed, as where it is looser than netc (an editor grammar only
colours, and netc's diagnostics say what is wrong). Prints the counts and
`N passed, N failed` (valid samples parsed cleanly, and not).

It also checks that grammar.js knows the scenario setting keys that
compiler/src/syntax/settings.rs declares, no more and no fewer (they are keywords there).
"""

import json
import pathlib
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

REPO = pathlib.Path(__file__).resolve().parents[2]
GRAMMAR = pathlib.Path(__file__).resolve().parent


def net_files() -> list:
    listed = subprocess.run(["git", "ls-files", "*.net"], cwd=REPO, capture_output=True, text=True, check=True)
    return [line for line in listed.stdout.splitlines() if line]


def markdown_examples(out_dir: pathlib.Path) -> list:
    """Each ```net block of a tracked Markdown file, written to its own file."""
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True)
    written = []
    for name in listed.stdout.split():
        text = (REPO / name).read_text(encoding="utf-8")
        for i, block in enumerate(re.findall(r"^```net[^\n]*\n(.*?)^```", text, flags=re.S | re.M)):
            path = out_dir / (name.replace("/", "__") + f"__{i}.net")
            path.write_text(block, encoding="utf-8")
            written.append(str(path))
    return written


def syntax_errors(netc: str, files: list) -> dict:
    """File -> the E01xx codes netc reports in it."""
    done = subprocess.run([netc, "check", "--format", "json", "--color", "never", *files], cwd=REPO, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"netc check failed: {done.stderr}")
    codes = defaultdict(set)
    for d in json.loads(done.stdout)["diagnostics"]:
        if d["code"].startswith("E01"):
            codes[d["file"]].add(d["code"])
    return codes


def tree_sitter_clean(tree_sitter: str, files: list) -> dict:
    """File -> whether the grammar parsed it without an error node."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as listing:
        listing.write("\n".join(files) + "\n")
    done = subprocess.run(
        [tree_sitter, "parse", "--grammar-path", str(GRAMMAR), "--quiet", "--json-summary", "--paths", listing.name],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    out = done.stdout
    summary = json.loads(out[out.index("{\n") :])
    return {s["file"]: s["successful"] for s in summary["parse_summaries"]}


def setting_keys_agree() -> bool:
    """Whether grammar.js lists the keys of `SETTINGS` (compiler/src/syntax/settings.rs)."""
    rust = (REPO / "compiler/src/syntax/settings.rs").read_text(encoding="utf-8")
    declared = set(re.findall(r'spec\(\s*"([a-z_]+)"', rust))
    grammar = (GRAMMAR / "grammar.js").read_text(encoding="utf-8")
    lists = re.findall(r"const (?:FLAG|VALUE)_KEYS = \[(.*?)\];", grammar, flags=re.S)
    known = set(re.findall(r"'([a-z_]+)'", " ".join(lists))) | {"dim", "dataloader"}
    if declared != known:
        print(f"FAIL setting keys: only in settings.rs {sorted(declared - known)}, only in grammar.js {sorted(known - declared)}")
        return False
    print(f"setting keys: the grammar knows the {len(declared)} of settings.rs")
    return True


def main() -> int:
    tree_sitter, netc = sys.argv[1], sys.argv[2]
    keys_ok = setting_keys_agree()
    with tempfile.TemporaryDirectory() as tmp:
        groups = {"files": net_files(), "examples in Markdown": markdown_examples(pathlib.Path(tmp))}
        everything = [f for fs in groups.values() for f in fs]
        errors = syntax_errors(netc, everything)
        clean = tree_sitter_clean(tree_sitter, everything)
        failed, looser = [], []
        for group, files in groups.items():
            both_ok = both_reject = 0
            for f in files:
                valid = not errors.get(f)
                if valid and clean[f]:
                    both_ok += 1
                elif valid:
                    failed.append(f)
                elif clean[f]:
                    looser.append((f, sorted(errors[f])))
                else:
                    both_reject += 1
            print(
                f"{group}: {len(files)}; netc accepts {sum(1 for f in files if not errors.get(f))}, "
                f"the grammar parses all of them: {both_ok}; netc rejects {sum(1 for f in files if errors.get(f))}, "
                f"the grammar too: {both_reject}"
            )
        def shown(f: str) -> str:
            return f if not f.startswith(tmp) else pathlib.Path(f).name.replace("__", "/")

        for f in failed:
            print(f"FAIL the grammar has an error node in {shown(f)}, which netc accepts")
        for f, codes in looser:
            print(f"looser than netc: {shown(f)} ({', '.join(codes)}) parses without an error node")
        valid_count = sum(1 for f in everything if not errors.get(f))
        print(f"tree-sitter agreement: {valid_count - len(failed)} passed, {len(failed)} failed")
        return 1 if failed or not keys_ok else 0


if __name__ == "__main__":
    sys.exit(main())
