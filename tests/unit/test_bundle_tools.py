"""The pure parts of the VS Code bundle's build and launcher: the prune rules' matching, the AWS
services kept, the check of compiled extensions against their ABI folders, and what
``bundled/launch.py`` says about an interpreter."""

from __future__ import annotations

import importlib.util
import json
import platform
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str, path: Path):
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(path.parent))


bundle_server = load("pi_lsp_tools_bundle_server", ROOT / "tools" / "bundle_server.py")
launch = load("pi_lsp_bundled_launch", ROOT / "editors" / "vscode" / "bundled" / "launch.py")


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("botocore/data/ec2", "botocore/data/*"),
        ("botocore/data/sts", None),  # kept by the "!" line after it
        ("botocore/data/sts/2011-06-15/service-2.json.gz", None),
        ("botocore/data/endpoints.json", None),
        ("hf_xet", "/hf_xet"),
        ("huggingface_hub/hf_xet", None),  # "/" anchors a name to the top
        ("litellm/proxy/_experimental/out", "litellm/proxy/_experimental/out"),
        ("litellm/proxy/_experimental/post_call_rules.py", None),
        ("pydantic_core/core_schema.pyi", "*.pyi"),
        ("litellm/llms/openai/chat/__pycache__", "__pycache__"),
        ("regex/tests", "/*/tests"),
        ("litellm/llms/tests", None),  # only the packages' own top-level test suites
        ("litellm/llms/openai/chat/transformation.py", None),
    ],
)
def test_prune_rules_match_like_gitignore(path, rule):
    rules = [*bundle_server.prune_rules(), "!botocore/data/sts"]
    assert bundle_server.dropped_by(rules)(path) == rule


def test_the_aws_services_kept_are_those_code_creates_clients_for(tmp_path):
    data = tmp_path / "botocore" / "data"
    for service in ("sts", "sso", "sso-oidc", "signin", "bedrock-runtime", "s3", "ec2", "polly"):
        (data / service).mkdir(parents=True)
    bedrock = tmp_path / "litellm" / "llms" / "bedrock.py"
    bedrock.parent.mkdir(parents=True)
    bedrock.write_text(
        'client = boto3.client(\n    service_name="bedrock-runtime", region_name=region)\n'
        's3 = boto3.client(  # a comment\n    "s3",\n)\nname = "polly"  # a string, not a client\n'
    )
    assert bundle_server.aws_services_in_use(tmp_path) == {
        "sts",
        "sso",
        "sso-oidc",
        "signin",
        "bedrock-runtime",
        "s3",
    }


ELF = b"\x7fELF\x02\x01\x01\x00"


def fake_libs(root: Path, files: dict[str, bytes]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def test_check_abis_accepts_a_sound_bundle(tmp_path):
    libs = fake_libs(
        tmp_path,
        {
            "common/litellm/rust_bridge/_native.abi3.so": ELF,
            **{
                f"cp3{minor}/pydantic_core/_pydantic_core.cpython-3{minor}-x86_64-linux-gnu.so": ELF
                for minor in (11, 12, 13)
            },
        },
    )
    assert bundle_server.check_abis(libs, "linux-x64", ("cp311", "cp312", "cp313")) == []


def test_check_abis_finds_a_wrong_tag_a_missing_package_and_a_foreign_binary(tmp_path):
    libs = fake_libs(
        tmp_path,
        {
            "common/tiktoken/_tiktoken.cpython-311-x86_64-linux-gnu.so": ELF,
            "cp311/yaml/_yaml.cpython-311-x86_64-linux-gnu.so": ELF,
            "cp311/msgspec/_core.cpython-311-x86_64-linux-gnu.so": ELF,
            "cp312/yaml/_yaml.cpython-311-x86_64-linux-gnu.so": ELF,
            "cp312/msgspec/_core.cpython-312-x86_64-linux-gnu.so": b"\xcf\xfa\xed\xfe",
        },
    )
    problems = bundle_server.check_abis(libs, "linux-x64", ("cp311", "cp312"))
    assert (
        "common/tiktoken/_tiktoken.cpython-311-x86_64-linux-gnu.so: built for one ABI, not abi3"
        in problems
    )
    assert (
        "cp312/yaml/_yaml.cpython-311-x86_64-linux-gnu.so: built for cp311, not cp312" in problems
    )
    assert "cp312/msgspec/_core.cpython-312-x86_64-linux-gnu.so: not a linux-x64 binary" in problems


def test_check_abis_finds_a_package_one_abi_lacks(tmp_path):
    libs = fake_libs(
        tmp_path,
        {
            "cp311/yaml/_yaml.cpython-311-x86_64-linux-gnu.so": ELF,
            "cp312/other/_other.cpython-312-x86_64-linux-gnu.so": ELF,
        },
    )
    problems = bundle_server.check_abis(libs, "linux-x64", ("cp311", "cp312"))
    assert problems == ["cp312 holds ['other'], cp311 ['yaml']"]


def bundle_manifest(**overrides) -> dict:
    abi = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    manifest = {
        "abis": [abi],
        "os": sys.platform,
        "machines": [platform.machine().lower()],
        "piLsp": "0.1.0",
    }
    return {**manifest, **overrides}


def test_launch_accepts_this_interpreter_for_a_bundle_of_its_abi():
    assert launch.problem_with_this_python(bundle_manifest()) is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"abis": ["cp312", "cp313"]}, "has no bundled libraries; bundled: cp312, cp313"),
        ({"os": "win32"}, "this Python is built for"),
        ({"machines": ["arm64"]}, "the bundle for"),
    ],
)
def test_launch_says_why_an_interpreter_does_not_fit(overrides, message):
    assert message in launch.problem_with_this_python(bundle_manifest(**overrides))


def test_launch_without_a_bundle_says_so():
    assert "carries no server" in launch.problem_with_this_python(None)


def test_launch_probe_is_one_json_object(tmp_path, monkeypatch, capsys):
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "manifest.json").write_text(json.dumps(bundle_manifest()))
    monkeypatch.setattr(launch, "LIBS", str(libs))
    monkeypatch.setattr(sys, "argv", ["launch.py", "--probe"])
    assert launch.main() == 0
    probe = json.loads(capsys.readouterr().out)
    assert (
        probe["bundled"] is True and probe["bundledVersion"] == "0.1.0" and probe["problem"] is None
    )
