"""netc lsp, driven by pytest-lsp's client: diagnostics, inlay hints, hover and code lens on
examples/resnet18.net, before and after an edit."""

import asyncio
import os
import pathlib

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
NETC = os.environ.get("NETC_BIN", str(TARGET / "debug" / "netc"))
EXAMPLES = ROOT / "examples"
RESNET = EXAMPLES / "resnet18.net"
URI = RESNET.as_uri()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[NETC, "lsp"]))
async def client(lsp_client: LanguageClient):
    # What an editor answers to the server's requests (it watches `**/*.net` for the server,
    # and refreshes hints and lenses when the active scenario changes).
    for method in (
        types.CLIENT_REGISTER_CAPABILITY,
        types.WORKSPACE_INLAY_HINT_REFRESH,
        types.WORKSPACE_CODE_LENS_REFRESH,
    ):
        lsp_client.feature(method)(lambda *args: None)

    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=EXAMPLES.as_uri(), name="examples")],
    )
    result = await lsp_client.initialize_session(params)
    assert result.capabilities.inlay_hint_provider
    yield
    await lsp_client.shutdown_session()


async def next_diagnostics(client: LanguageClient, until=lambda d: True, timeout: float = 30.0):
    """The diagnostics of URI, pulled (VS Code's capabilities ask for pull diagnostics, so
    the server pushes none) until they satisfy `until`."""

    async def pull():
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))
        while True:
            report = await client.text_document_diagnostic_async(params)
            if until(list(report.items)):
                return list(report.items)
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(pull(), timeout)


def whole_document(text: str) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=text.count("\n") + 1, character=0))


def position_of(text: str, needle: str, shift: int = 0) -> types.Position:
    at = text.index(needle) + shift
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return types.Position(line=line, character=len(text[start:at].encode("utf-16-le")) // 2)


def problems(diagnostics):
    """Errors and warnings (lints may also give advice, at lower severities)."""
    return [d for d in diagnostics if d.severity in (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)]


async def open_resnet(client: LanguageClient) -> str:
    """Opens examples/resnet18.net, waits for its diagnostics (no problems) and returns its text."""
    text = RESNET.read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=URI, language_id="net", version=1, text=text)
        )
    )
    assert problems(await next_diagnostics(client)) == []
    return text


async def figures(client: LanguageClient, text: str):
    doc = types.TextDocumentIdentifier(uri=URI)
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc, range=whole_document(text)))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=position_of(text, "conv2d(x, 64", 2))
    )
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
    return hints, hover, lenses


async def test_figures_follow_an_edit(client: LanguageClient):
    text = await open_resnet(client)

    hints, hover, lenses = await figures(client, text)
    labels = [h.label for h in hints]
    assert len(labels) == 12, labels
    assert all(len(label) <= 30 for label in labels), labels
    assert labels[0].startswith("f32[64,3,224,224]"), labels
    assert "2-D convolution" in hover.contents.value
    assert "In scenario `imagenet`" in hover.contents.value
    # `precision amp`: the convolution's output is half, as autocast makes it.
    assert "`f16[64, 64, 112, 112]`" in hover.contents.value
    titles = [lens.command.title for lens in lenses]
    assert len(titles) == 2 and titles[0].startswith("● active"), titles

    # Halve the batch: shapes, bytes and MACs follow.
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(start=position_of(text, "batch 64", 6), end=position_of(text, "batch 64", 8)), text="32"
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2), content_changes=[edit]
        )
    )
    text = text.replace("batch 64", "batch 32", 1)
    assert problems(await next_diagnostics(client)) == []
    hints2, hover2, lenses2 = await figures(client, text)
    labels2 = [h.label for h in hints2]
    assert labels2 != labels
    assert labels2[0].startswith("f32[32,3,224,224]"), labels2
    assert "`f16[32, 64, 112, 112]`" in hover2.contents.value
    assert [lens.command.title for lens in lenses2] != titles

    # A mistake: the diagnostics say so, and the scenario's figures go away.
    mistake = types.TextDocumentContentChangePartial(
        range=types.Range(start=position_of(text, "model resnet18()"), end=position_of(text, "model resnet18()", 16)),
        text="model resnet19()",
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=3), content_changes=[mistake]
        )
    )
    diagnostics = problems(await next_diagnostics(client, until=lambda d: len(problems(d)) > 0))
    assert [d.code for d in diagnostics] == ["E0212"], diagnostics
    assert "resnet19" in diagnostics[0].message


async def test_a_code_lens_makes_its_scenario_active(client: LanguageClient):
    text = await open_resnet(client)
    hints, _, lenses = await figures(client, text)
    serve = lenses[1].command
    assert serve.command == "netc.setActiveScenario" and serve.title.startswith("○ set active"), serve
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=serve.command, arguments=serve.arguments)
    )
    hints2, hover2, lenses2 = await figures(client, text)
    assert hints2[0].label.startswith("f32[1,3,224,224]"), [h.label for h in hints2]
    assert "In scenario `serve`" in hover2.contents.value
    assert lenses2[1].command.title.startswith("● active"), [lens.command.title for lens in lenses2]
