"""grep (ripgrep and the pure-Python fallback), find and ls."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from pi_lsp.tools import ToolContext
from pi_lsp.tools.find import FindTool
from pi_lsp.tools.grep import GrepTool
from pi_lsp.tools.ls import LsTool
from pi_lsp.tools.walk import GitIgnore, GlobMatcher

HAVE_RG = shutil.which("rg") is not None


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small repository: sources, ignored output, .git, node_modules, a binary file."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("needle in git\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("needle in node_modules\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle in build\n")
    (root / "src" / "deep").mkdir(parents=True)
    (root / "src" / "main.py").write_text(
        "import os\n\ndef main():\n    return 'Needle'\n# needle here\n"
    )
    (root / "src" / "deep" / "util.py").write_text("x = 1\nneedle = 2\ny = 3\n")
    (root / "src" / "deep" / "notes.md").write_text("a needle in notes\n")
    (root / "src" / "skip.log").write_text("needle in a log\n")
    (root / ".hidden.py").write_text("needle hidden\n")
    (root / "blob.bin").write_bytes(b"needle\0\0\0binary")
    (root / ".gitignore").write_text("build/\n*.log\n")
    return root


@pytest.fixture(params=["ripgrep", "python"])
def grep(request) -> GrepTool:
    if request.param == "ripgrep" and not HAVE_RG:
        pytest.skip("ripgrep is not installed")
    tool = GrepTool()
    tool.use_ripgrep = request.param == "ripgrep"
    return tool


# ---------------------------------------------------------------------------- grep


async def test_grep_finds_matches_honouring_ignores(grep, tree: Path):
    result = await grep.execute({"pattern": "needle"}, ToolContext(cwd=tree))
    assert not result.is_error
    assert sorted(result.text.split("\n")) == [
        ".hidden.py:1: needle hidden",
        "src/deep/notes.md:1: a needle in notes",
        "src/deep/util.py:2: needle = 2",
        "src/main.py:5: # needle here",
    ]
    assert result.details is None


async def test_grep_options(grep, tree: Path):
    ctx = ToolContext(cwd=tree)
    result = await grep.execute(
        {"pattern": "NEEDLE", "path": "src", "ignoreCase": True, "glob": "*.py"}, ctx
    )
    assert sorted(result.text.split("\n")) == [
        "deep/util.py:2: needle = 2",
        "main.py:4:     return 'Needle'",
        "main.py:5: # needle here",
    ]
    result = await grep.execute({"pattern": "needle = (", "literal": True}, ctx)
    assert result.text == "No matches found"
    result = await grep.execute(
        {"pattern": "ne+dle = \\d", "path": "src/deep/util.py", "context": 1}, ctx
    )
    assert result.text == "util.py-1- x = 1\nutil.py:2: needle = 2\nutil.py-3- y = 3"
    result = await grep.execute({"pattern": "needle", "glob": "src/**/*.md"}, ctx)
    assert result.text == "src/deep/notes.md:1: a needle in notes"


async def test_grep_limit_and_long_lines(grep, tmp_path: Path):
    (tmp_path / "many.txt").write_text("".join(f"hit {i}\n" for i in range(50)))
    (tmp_path / "wide.txt").write_text("hot " + "w" * 800 + "\n")
    ctx = ToolContext(cwd=tmp_path)
    result = await grep.execute({"pattern": "hit", "limit": 10}, ctx)
    body, note = result.text.split("\n\n")
    assert len(body.split("\n")) == 10
    assert (
        note == "[Stopped at the limit of 10 matches. Use limit=20 for more, or narrow the pattern]"
    )
    assert result.details == {"matchLimitReached": 10}
    result = await grep.execute({"pattern": "hot"}, ctx)
    assert result.text.startswith("wide.txt:1: hot " + "w" * 496 + "... [truncated]")
    assert "Some lines were cut to 500 characters" in result.text
    assert result.details == {"linesTruncated": True}


async def test_grep_errors(grep, tree: Path):
    ctx = ToolContext(cwd=tree)
    result = await grep.execute({"pattern": "("}, ctx)
    assert result.is_error
    result = await grep.execute({"pattern": "x", "path": "nowhere"}, ctx)
    assert result.is_error and result.text.startswith("Path not found:")
    result = await grep.execute({"path": "src"}, ctx)
    assert result.is_error and "pattern: required but missing" in result.text


async def test_grep_output_is_capped_at_50kb(grep, tmp_path: Path):
    (tmp_path / "f.txt").write_text(("match " + "m" * 400 + "\n") * 200)
    result = await grep.execute({"pattern": "match", "limit": 1000}, ToolContext(cwd=tmp_path))
    assert "[Output cut at the 50.0KB limit]" in result.text
    assert result.details["truncation"]["truncatedBy"] == "bytes"


# ---------------------------------------------------------------------------- find


async def test_find_by_name_and_by_path(tree: Path):
    find = FindTool()
    ctx = ToolContext(cwd=tree)
    result = await find.execute({"pattern": "*.py"}, ctx)
    assert result.text == ".hidden.py\nsrc/deep/util.py\nsrc/main.py"
    result = await find.execute({"pattern": "src/**/*.py"}, ctx)
    assert result.text == "src/deep/util.py\nsrc/main.py"
    result = await find.execute({"pattern": "deep/*"}, ctx)
    assert result.text == "src/deep/notes.md\nsrc/deep/util.py"
    result = await find.execute({"pattern": "*.py", "path": "src"}, ctx)
    assert result.text == "deep/util.py\nmain.py"
    result = await find.execute({"pattern": "de*"}, ctx)
    assert result.text == "src/deep/"
    result = await find.execute({"pattern": "*.{md,py}", "path": "src/deep"}, ctx)
    assert result.text == "notes.md\nutil.py"


async def test_find_smart_case_limit_and_errors(tree: Path):
    find = FindTool()
    ctx = ToolContext(cwd=tree)
    (tree / "README.md").write_text("hi")
    assert (await find.execute({"pattern": "readme*"}, ctx)).text == "README.md"
    assert (
        await find.execute({"pattern": "Readme*"}, ctx)
    ).text == "No files found matching the pattern"
    result = await find.execute({"pattern": "*", "limit": 2}, ctx)
    assert (
        result.text == ".gitignore\n.hidden.py\n\n[Stopped at the limit of 2 "
        "results. Use limit=4 for more, or narrow the pattern]"
    )
    assert result.details == {"resultLimitReached": 2}
    assert (await find.execute({"pattern": "*", "path": "missing"}, ctx)).text.startswith(
        "Path not found:"
    )
    assert (await find.execute({"pattern": "*", "path": ".gitignore"}, ctx)).text.startswith(
        "Not a directory:"
    )
    assert (await find.execute({"pattern": "*", "limit": 0}, ctx)).is_error


async def test_find_skips_git_node_modules_and_ignored(tree: Path):
    result = await FindTool().execute({"pattern": "**"}, ToolContext(cwd=tree))
    listed = result.text.split("\n")
    assert listed == [
        ".gitignore",
        ".hidden.py",
        "blob.bin",
        "src/",
        "src/deep/",
        "src/deep/notes.md",
        "src/deep/util.py",
        "src/main.py",
    ]


async def test_find_honours_gitignore_of_folders_above(tree: Path):
    result = await FindTool().execute({"pattern": "*"}, ToolContext(cwd=tree / "src"))
    assert "skip.log" not in result.text
    assert result.text.split("\n") == ["deep/", "deep/notes.md", "deep/util.py", "main.py"]


def test_glob_matcher():
    assert GlobMatcher("*.py").matches("a/b/c.py")
    assert not GlobMatcher("*.py").matches("a/b/c.pyc")
    assert GlobMatcher("a/**/c.py").matches("a/c.py")
    assert GlobMatcher("a/**/c.py").matches("a/x/y/c.py")
    assert not GlobMatcher("a/*.py").matches("a/x/c.py")
    assert GlobMatcher("file?.[ch]").matches("file1.c")
    assert GlobMatcher("[!a]*").matches("bcd") and not GlobMatcher("[!a]*").matches("abc")
    assert GlobMatcher("*.{js,ts}").matches("x.ts")
    assert GlobMatcher("!*.md").negated


def test_gitignore_rules(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("# comment\n*.pyc\n/top.txt\ndist/\n!keep.pyc\nsub/gen\n")
    ignore = GitIgnore(tmp_path)
    ignore.load("", tmp_path)
    assert ignore.ignored("a/b.pyc", False)
    assert not ignore.ignored("a/keep.pyc", False)
    assert ignore.ignored("top.txt", False) and not ignore.ignored("a/top.txt", False)
    assert ignore.ignored("x/dist", True) and not ignore.ignored("x/dist", False)
    assert ignore.ignored("sub/gen", True) and not ignore.ignored("other/sub/gen", True)


def test_a_deeper_gitignore_wins_and_unanchored_patterns_apply_at_any_depth_below(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("*.log\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("!keep.log\n*.tmp\n")
    ignore = GitIgnore(tmp_path)
    ignore.load("", tmp_path)
    ignore.load("sub", sub)
    assert ignore.ignored("a.log", False) and ignore.ignored("sub/x/a.log", False)
    assert not ignore.ignored("sub/keep.log", False)
    assert ignore.ignored("sub/deep/er/x.tmp", False) and not ignore.ignored("x.tmp", False)


# ---------------------------------------------------------------------------- ls


async def test_ls_sorted_with_folder_marks_and_dotfiles(tree: Path):
    ls = LsTool()
    (tree / "Zeta").mkdir()
    (tree / "alpha.txt").write_text("")
    os.symlink(tree / "nowhere", tree / "dangling")
    os.symlink(tree / "src", tree / "link-to-src")
    result = await ls.execute({}, ToolContext(cwd=tree))
    assert result.text.split("\n") == [
        ".git/",
        ".gitignore",
        ".hidden.py",
        "alpha.txt",
        "blob.bin",
        "build/",
        "link-to-src/",
        "node_modules/",
        "src/",
        "Zeta/",
    ]
    result = await ls.execute({"path": "src", "limit": 2}, ToolContext(cwd=tree))
    assert (
        result.text == "deep/\nmain.py\n\n[Stopped at the limit of 2 entries. Use limit=4 for more]"
    )
    assert result.details == {"entryLimitReached": 2}


async def test_ls_errors_and_empty(tmp_path: Path):
    ls = LsTool()
    ctx = ToolContext(cwd=tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "f").write_text("")
    assert (await ls.execute({"path": "empty"}, ctx)).text == "(empty directory)"
    result = await ls.execute({"path": "missing"}, ctx)
    assert result.is_error and result.text == f"Path not found: {tmp_path / 'missing'}"
    result = await ls.execute({"path": "f"}, ctx)
    assert result.is_error and result.text.startswith("Not a directory:")
    assert (await ls.execute({"limit": "x"}, ctx)).is_error


async def test_search_tools_can_be_cancelled(tmp_path: Path):
    for i in range(30):
        sub = tmp_path / f"d{i}"
        sub.mkdir()
        for j in range(30):
            (sub / f"f{j}.txt").write_text("nothing\n" * 50)
    grep = GrepTool()
    grep.use_ripgrep = False
    for coroutine in (
        grep.execute({"pattern": "zzz"}, ToolContext(cwd=tmp_path)),
        FindTool().execute({"pattern": "*.nope"}, ToolContext(cwd=tmp_path)),
    ):
        task = asyncio.create_task(coroutine)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
